package e2e

import (
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/resp"
)

// TestReplayRulesCanFail holds that the comparison's allowances for timing
// (retry loops, fencing token values) still refuse what a wrong server does.
func TestReplayRulesCanFail(t *testing.T) {
	nilR, ok := resp.Value{Kind: '_', Null: true}, resp.Value{Kind: '+', Str: "OK"}
	run := []int{0, 1, 2, 3, 4, 5}
	for _, c := range []struct {
		got   []resp.Value
		waits int
		want  bool
	}{
		{[]resp.Value{nilR, nilR, nilR, nilR, nilR, ok}, 5, true},
		{[]resp.Value{nilR, nilR, nilR, ok, ok, ok}, 3, true},        // the lease ran out an attempt or two early
		{[]resp.Value{nilR, nilR, nilR, nilR, nilR, nilR}, 6, false}, // never granted
		{[]resp.Value{nilR, ok, nilR, nilR, nilR, ok}, 1, false},     // granted, then refused again
	} {
		a, got := waitThenFinal(c.got, run, nilR, ok, 5000)
		if a != c.waits || got != c.want {
			t.Errorf("%v: %d waits, ok=%v; want %d, %v", c.got, a, got, c.waits, c.want)
		}
	}

	tok := func(n int64) resp.Value {
		return resp.Value{Kind: '*', Elems: []resp.Value{{Kind: ':', Int: -1}, {Kind: ':', Int: n}}}
	}
	for _, c := range []struct {
		recorded, proxy []int64
		fails           bool
	}{
		{[]int64{1, 2}, []int64{1, 2}, false},
		{[]int64{1, 2}, []int64{1, 3}, false}, // a skipped value
		{[]int64{1, 2}, []int64{2, 2}, true},  // not increasing
		{[]int64{1, 2}, []int64{1, 1}, true},
		{[]int64{2, 3}, []int64{1, 3}, true}, // below the recorded
		{[]int64{1, 1}, []int64{1, 2}, true}, // the recording repeats it
	} {
		ft := &testing.T{}
		var o tokenOrder
		for i := range c.recorded {
			o.check(ft, i, ttlFirstReply, tok(c.proxy[i]), tok(c.recorded[i]), tok(c.recorded[i]), false)
		}
		if ft.Failed() != c.fails {
			t.Errorf("recorded %v, proxy %v: failed=%v, want %v", c.recorded, c.proxy, ft.Failed(), c.fails)
		}
	}
}
