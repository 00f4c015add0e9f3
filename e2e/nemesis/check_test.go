package main

import (
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func acq(owner string, inv, ret, ttl int, out history.Outcome, tok int64) history.Op {
	return history.Op{Key: "k", Kind: history.Acquire, Owner: owner, Invoke: ms(inv), Return: ms(ret), TTL: ms(ttl), Outcome: out, Token: tok}
}

func op(kind history.Kind, owner string, inv, ret, ttl int, out history.Outcome, tok int64) history.Op {
	return history.Op{Key: "k", Kind: kind, Owner: owner, Invoke: ms(inv), Return: ms(ret), TTL: ms(ttl), Outcome: out, Token: tok}
}

// TestLocalCheck: each history is one the checker must flag (want names
// the anomaly) or must pass (want "").
func TestLocalCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []history.Op
		want string
	}{
		{"disjoint holds", []history.Op{acq("a", 0, 10, 1000, history.OK, 0), acq("b", 1000, 1010, 1000, history.OK, 0)}, ""},
		{"overlap", []history.Op{acq("a", 0, 10, 1000, history.OK, 0), acq("b", 500, 510, 1000, history.OK, 0)}, "two owners"},
		{"released before", []history.Op{acq("a", 0, 10, 1000, history.OK, 0), op(history.Release, "a", 400, 900, 0, history.Unknown, 0),
			acq("b", 500, 510, 1000, history.OK, 0)}, ""},
		{"unknown acquire constrains nothing", []history.Op{acq("a", 0, 10, 1000, history.Unknown, 0), acq("b", 500, 510, 1000, history.OK, 0)}, ""},
		{"extend lengthens", []history.Op{acq("a", 0, 10, 1000, history.OK, 0), op(history.Extend, "a", 900, 910, 1000, history.OK, 0),
			acq("b", 1500, 1510, 1000, history.OK, 0)}, "two owners"},
		{"extend shortens", []history.Op{acq("a", 0, 10, 2000, history.OK, 0), op(history.Extend, "a", 900, 910, 100, history.OK, 0),
			acq("b", 1500, 1510, 1000, history.OK, 0)}, ""},
		{"unknown extend may shorten", []history.Op{acq("a", 0, 10, 2000, history.OK, 0), op(history.Extend, "a", 900, 910, 100, history.Unknown, 0),
			acq("b", 1500, 1510, 1000, history.OK, 0)}, ""},
		{"told it holds inside another's window", []history.Op{acq("a", 0, 10, 2000, history.OK, 0), acq("b", 2000, 2010, 3000, history.OK, 0),
			op(history.Token, "a", 2500, 2510, 0, history.OK, 7)}, "was told it holds"},
		{"one lock two tokens", []history.Op{acq("a", 0, 10, 2000, history.OK, 5), op(history.Token, "a", 20, 30, 0, history.OK, 6)}, "two tokens"},
		{"tokens go up", []history.Op{acq("a", 0, 10, 100, history.OK, 5), acq("b", 200, 210, 100, history.OK, 6)}, ""},
		{"token went back", []history.Op{acq("a", 0, 10, 100, history.OK, 5), acq("b", 200, 210, 100, history.OK, 5)}, "token went back"},
		{"first token read fixes it", []history.Op{acq("a", 0, 10, 100, history.OK, 0), op(history.Token, "a", 20, 30, 0, history.OK, 9),
			acq("b", 200, 210, 100, history.OK, 0), op(history.Token, "b", 220, 230, 0, history.OK, 8)}, "token went back"},
		{"concurrent acquires unordered", []history.Op{acq("a", 0, 300, 100, history.OK, 9), acq("b", 200, 210, 100, history.OK, 8)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := localCheck(tc.ops)
			got := strings.Join(v.Anomalies, "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("anomalies %q; want %q", got, tc.want)
			}
		})
	}
}
