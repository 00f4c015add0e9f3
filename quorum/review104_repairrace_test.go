package quorum

import (
	"context"
	"testing"
	"time"
)

// review104 (pre-existing, not 62b4109's): fence judges a node intact when
// it fences, not when the node counted. Node 0 restarted empty; once out
// of quarantine it votes before it is repaired (node 2's counters cannot
// be read yet, so the repair waits). A fenced acquire's INCR runs on node
// 0's empty counter (1); node 1's acquire is held; node 2 refuses. Node 2
// comes back (its raises still fail), node 0 is repaired and marked intact,
// then node 1 answers: the fence counts node 0 as an intact granting node
// with the counter 1 it answered before its repair, so the token is node 1's
// count alone, which never saw the earlier grant (on nodes 0 and 2).
func TestReview104RepairBetweenIncrAndFence(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithMaxTTL(400*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	eventuallyTrue(t, func() bool {
		st := e.Status()
		return st[0].Intact && st[1].Intact && st[2].Intact && st[0].Why == "" && st[1].Why == "" && st[2].Why == ""
	})
	// P: granted on nodes 0 and 2; node 1 refuses it and misses its raises.
	fs[1].setOpFault("setnx", errRefused, nil)
	fs[1].setOpFault("raise", errRefused, nil)
	p, err := e.AcquireFenced(ctx, "k", "p", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Release(ctx, "k", "p"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // P's window over: its confirmation is no longer resent
	fs[1].setOpFault("setnx", nil, nil)
	fs[1].setOpFault("raise", nil, nil)
	t.Logf("P = %d; counters %d %d %d", p.Token, fs[0].counter(TokenKey), fs[1].counter(TokenKey), fs[2].counter(TokenKey))

	fs[2].setFault(errRefused, 0, nil) // its counters cannot be read: node 0's repair waits
	fs[0].restart(false)
	eventuallyTrue(t, func() bool { st := e.Status(); return st[0].Why == "" && !st[0].Intact }) // votes, unrepaired
	gate := make(chan struct{})
	fs[1].setOpFault("setnx", nil, gate)
	done := fencedAsync(e, "k", "g", 300*time.Millisecond)
	eventuallyTrue(t, func() bool { _, ok := fs[0].get("k"); return ok }) // node 0 counted: 1
	fs[0].mu.Lock()
	t.Logf("node 0's copy of G's lock: %+v; its counter %s; status %+v", fs[0].data["k"], fs[0].data[TokenKey].value, e.Status()[0])
	fs[0].mu.Unlock()
	fs[2].setOpFault("raise", errRefused, nil)
	fs[2].setFault(nil, 0, nil)
	eventuallyTrue(t, func() bool { return e.Status()[0].Intact }) // repaired
	close(gate)
	r := <-done
	for i, f := range fs {
		f.mu.Lock()
		t.Logf("node %d: first raises %d, raises %d, setnx %d, G's copy %+v, writer %q", i, f.calls["first raise"], f.calls["raise"], f.calls["setnx"], f.data["k"], f.data[WriterKey(TokenKey)].value)
		f.mu.Unlock()
	}
	t.Logf("G = %+v, %v; counters %d %d %d", r.g.Token, r.err, fs[0].counter(TokenKey), fs[1].counter(TokenKey), fs[2].counter(TokenKey))
	if r.err == nil && r.g.Token <= p.Token {
		t.Fatalf("G answered token %d after P's %d: not above", r.g.Token, p.Token)
	}
}
