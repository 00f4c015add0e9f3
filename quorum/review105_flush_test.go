package quorum

import (
	"context"
	"errors"
	"testing"
	"time"
)

// flush empties the node as FLUSHALL does: data, counters, marker and
// max-TTL record gone, the same run_id (no restart to be seen).
func (f *fakeNode) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data, f.counters, f.marker, f.record, f.engines = map[string]fakeEntry{}, map[string]bool{}, "", 0, nil
}

// review105: a backend flushed while a running engine has known it longer
// than the window is not quarantined (quarantine's "lacks the marker" case
// runs from the engine's first sight of the node), though README says a
// flushed backend among marked ones is "quarantined for the full window,
// even with a long uptime". A lock held on nodes 0 and 1 (node 2 refused)
// is lost on node 0 by the flush; another owner is granted on 0 and 2.
func TestReview105FlushedKnownBackendGrantsASecondOwner(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithMaxTTL(400*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	eventuallyTrue(t, func() bool {
		st := e.Status()
		return st[0].Intact && st[1].Intact && st[2].Intact && st[0].Why == "" && st[1].Why == "" && st[2].Why == ""
	})
	time.Sleep(time.Second) // known longer than the window
	fs[2].setOpFault("setnx", errRefused, nil)
	a, err := e.Acquire(ctx, "k", "a", 380*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].flush()
	time.Sleep(50 * time.Millisecond) // health checks every 10ms: the engine has read node 0 since
	t.Logf("node 0 after the flush: %+v", e.Status()[0])
	t.Logf("a granted %+v", a)
	g, err := secondOwner(t, e, "k", 380*time.Millisecond, aAt, 300*time.Millisecond)
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock (380ms TTL, taken moments ago) on node 1: two owners", g)
	}
	if !errors.Is(err, ErrTaken) && !errors.Is(err, ErrNoQuorum) {
		t.Logf("b: %v", err)
	}
}

// review105: round.intact's snapshot is a bool, not the node's state of
// counters: a node intact when the round is sent, flushed (same run_id, no
// quarantine for a node the engine knew) before the op runs there, and
// repaired before the fence reads the answers, was intact then and is
// intact now, so its count from the lost counter counts (the
// TestReview104RepairBetweenIncrAndFence shape, with the loss after the
// send).
func TestReview105FlushBetweenSendAndIncr(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithMaxTTL(400*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	eventuallyTrue(t, func() bool {
		st := e.Status()
		return st[0].Intact && st[1].Intact && st[2].Intact && st[0].Why == "" && st[1].Why == "" && st[2].Why == ""
	})
	time.Sleep(time.Second) // known longer than the window
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
	time.Sleep(400 * time.Millisecond)
	fs[1].setOpFault("setnx", nil, nil)
	fs[1].setOpFault("raise", nil, nil)
	t.Logf("P = %d; counters %d %d %d", p.Token, fs[0].counter(TokenKey), fs[1].counter(TokenKey), fs[2].counter(TokenKey))

	gate0, gate1 := make(chan struct{}), make(chan struct{})
	fs[0].setOpFault("setnx", nil, gate0)
	fs[1].setOpFault("setnx", nil, gate1)
	fs[2].setOpFault("setnx", errRefused, nil)
	fs[2].setOpFault("raise", errRefused, nil)
	done := fencedAsync(e, "k", "g", 300*time.Millisecond)
	eventuallyTrue(t, func() bool { return fs[0].callCount("setnx") > 1 }) // G sent, node 0 intact
	fs[0].flush()
	fs[0].setOpFault("setnx", nil, nil)
	close(gate0)                                                          // G's INCR on the flushed counter: 1
	eventuallyTrue(t, func() bool { _, ok := fs[0].get("k"); return ok }) // node 0 counted
	eventuallyTrue(t, func() bool { return e.Status()[0].Intact && fs[0].counter(TokenKey) > 1 })
	t.Logf("node 0 repaired: %+v; counter %d", e.Status()[0], fs[0].counter(TokenKey))
	close(gate1)
	r := <-done
	t.Logf("G = %+v, %v; counters %d %d %d", r.g.Token, r.err, fs[0].counter(TokenKey), fs[1].counter(TokenKey), fs[2].counter(TokenKey))
	if r.err == nil && r.g.Token <= p.Token {
		t.Fatalf("G answered token %d after P's %d: not above", r.g.Token, p.Token)
	}
}
