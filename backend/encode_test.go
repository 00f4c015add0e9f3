package backend

import (
	"reflect"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The keys each op's script gets, as the quorum's key helpers name them:
// written as prefix and name, they must read the same joined.
func TestKeysOf(t *testing.T) {
	k, c := "lock", "counter"
	leases := &[]quorum.Lease{{Key: "a"}, {Key: "b"}}
	for _, tc := range []struct {
		op   quorum.Op
		want []string
	}{
		{quorum.Op{Kind: quorum.OpSetNX, Key: k}, []string{k, quorum.MetaKey(k), quorum.QueueKey(k)}},
		{quorum.Op{Kind: quorum.OpSetNX, Key: k, Aux: c}, []string{k, quorum.MetaKey(k), c, quorum.CountersKey, quorum.WriterKey(c), quorum.QueueKey(k)}},
		{quorum.Op{Kind: quorum.OpSetNX, Key: k, Aux: c, Fair: true}, []string{k, quorum.MetaKey(k), c, quorum.CountersKey, quorum.WriterKey(c), quorum.QueueKey(k), quorum.QueueLeaseKey(k)}},
		{quorum.Op{Kind: quorum.OpDelIfEq, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpDelIfEq, Key: k, Fair: true}, []string{k, quorum.MetaKey(k), quorum.PinKey(k), quorum.QueueKey(k), quorum.QueueLeaseKey(k)}},
		{quorum.Op{Kind: quorum.OpEnqueue, Key: k}, []string{quorum.QueueKey(k), quorum.QueueLeaseKey(k)}},
		{quorum.Op{Kind: quorum.OpQueueBeats, Leases: leases}, []string{quorum.QueueKey("a"), quorum.QueueLeaseKey("a"), quorum.QueueKey("b"), quorum.QueueLeaseKey("b")}},
		{quorum.Op{Kind: quorum.OpRenew, Leases: leases}, []string{"a", quorum.MetaKey("a"), "b", quorum.MetaKey("b")}},
		{quorum.Op{Kind: quorum.OpDel, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpPrint, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpUndo, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpSetXX, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpReattach, Key: k}, []string{k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpUnmark, Key: k}, []string{quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpHashAcquire, Key: k}, []string{k, quorum.MetaKey(k), quorum.QueueKey(k)}},
		{quorum.Op{Kind: quorum.OpHashAcquire, Key: k, Aux: c}, []string{k, quorum.MetaKey(k), c, quorum.CountersKey, quorum.WriterKey(c), quorum.QueueKey(k)}},
		{quorum.Op{Kind: quorum.OpRaise, Key: c}, []string{c, quorum.CountersKey, quorum.WriterKey(c)}},
		{quorum.Op{Kind: quorum.OpFixToken, Key: c, Aux: k}, []string{c, quorum.CountersKey, quorum.WriterKey(c), k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpHashRelease, Key: k, Aux: c}, []string{k, quorum.MetaKey(k), c}},
		{quorum.Op{Kind: quorum.OpHashRelease, Key: k}, []string{k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpHashExtend, Key: k}, []string{k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpHashLease, Key: k}, []string{k, quorum.MetaKey(k), quorum.PinKey(k)}},
		{quorum.Op{Kind: quorum.OpHashSetHolds, Key: k, Aux: c}, []string{k, quorum.MetaKey(k), c}},
		{quorum.Op{Kind: quorum.OpHashUnhold, Key: k}, []string{k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpHashGet, Key: k}, []string{k, quorum.MetaKey(k)}},
		{quorum.Op{Kind: quorum.OpRead, Key: k}, []string{k}},
	} {
		var e encoder
		e.command(tc.op)
		var got []string
		for _, key := range e.keys {
			got = append(got, key.prefix+key.name)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("keys of %+v = %q; want %q", tc.op, got, tc.want)
		}
	}
}

// A batch's calls are encoded without an allocation per call once the
// worker's buffers have grown.
func TestEncodeAllocs(t *testing.T) {
	var e encoder
	var out []byte
	op := quorum.Op{Kind: quorum.OpSetNX, Key: "lock:1", Value: "v", Round: "ab.1@"}
	if n := testing.AllocsPerRun(100, func() {
		s := e.command(op)
		out = appendScript(out[:0], s, false, e.keys, e.args)
	}); n != 0 {
		t.Fatalf("%v allocations per encoded call; want 0", n)
	}
}
