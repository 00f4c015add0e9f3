package quorum

import (
	"context"
	"testing"
	"time"
)

// review108: every backend flushed at once (FLUSHALL on each: same run_id,
// same uptime, no marker, no presence) while lock a is held on all of
// them. The running replica sees its presence gone and quarantines each
// for the window. A replica started after the flush (a rolling restart, a
// scale-up, or the running one restarted) has no presence to miss; it
// finds no marker anywhere, so othersMayBeMarked is false for every node
// (all known, none intact), and the uptime rule (since = now - uptime,
// long ago) lets every node vote at once: b is granted while a's window is
// open. README ("After a total power loss (every backend restarted empty,
// or was flushed, at once) ... let the restart quarantine run out") and
// doc.go's wipe bound (nodes count again only W after the wipe) promise
// otherwise.
func TestReview108TotalFlushNewReplicaGrantsASecondOwner(t *testing.T) {
	fs, ns := fakes(3)
	opts := []Option{WithMaxTTL(2 * time.Second), WithNodeTimeout(100 * time.Millisecond), WithHealthInterval(10 * time.Millisecond)}
	e := newEngine(t, ns, opts...)
	ctx := context.Background()
	review106Steady(t, e)
	if _, err := e.Acquire(ctx, "k", "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	for _, f := range fs {
		f.flush() // FLUSHALL on every backend: run_id and uptime unchanged
	}
	eventuallyTrue(t, func() bool { return e.Status()[0].Why != "" && e.Status()[1].Why != "" && e.Status()[2].Why != "" })
	t.Logf("running replica: %s", e.Status()[0].Why)
	if g, err := e.Acquire(ctx, "k", "b", 2*time.Second); err == nil {
		t.Fatalf("running replica granted b %+v", g)
	}
	e2 := newEngine(t, ns, opts...)
	for i, st := range e2.Status() {
		t.Logf("new replica, node %d: intact=%v why=%q", i, st.Intact, st.Why)
	}
	g, err := secondOwner(t, e2, "k", 2*time.Second, aAt, 1500*time.Millisecond)
	if err == nil {
		t.Fatalf("new replica granted b %+v %s after a's 2s grant, the lock lost on every backend by the flush: two owners", g, time.Since(aAt))
	}
	t.Logf("b: %v", err)
}

// review108: the same with backends that fsync every write (appendonly
// yes, appendfsync always) and all come back empty at once (new empty
// servers at the same addresses, or a power loss that took their data
// directories): new run_ids, uptime 0, no marker. A replica started after
// (the replicas went down too) finds no marker anywhere: quarantine's
// "carries no marker where another carries its own" case does not apply
// (othersMayBeMarked: all known, none intact), the uptime rule is skipped
// for persistent nodes, and every node votes at once.
func TestReview108PersistentTotalWipeNewReplicaGrantsASecondOwner(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	opts := []Option{WithMaxTTL(2 * time.Second), WithNodeTimeout(100 * time.Millisecond), WithHealthInterval(10 * time.Millisecond)}
	e := newEngine(t, ns, opts...)
	ctx := context.Background()
	review106Steady(t, e)
	if _, err := e.Acquire(ctx, "k", "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	_ = e.Close() // the replicas go down too
	for _, f := range fs {
		f.flush()
		f.restart(true) // back empty, still appendfsync always: a new run
	}
	e2 := newEngine(t, ns, opts...)
	for i, st := range e2.Status() {
		t.Logf("new replica, node %d: persistent=%v intact=%v why=%q", i, st.Persistent, st.Intact, st.Why)
	}
	g, err := secondOwner(t, e2, "k", 2*time.Second, aAt, 1500*time.Millisecond)
	if err == nil {
		t.Fatalf("new replica granted b %+v %s after a's 2s grant, lost on every backend: two owners", g, time.Since(aAt))
	}
	t.Logf("b: %v", err)
}

// review108: the fencing side of the same sequence. The deployment was
// marked (bootstrapped) by a host whose clock ran 1.5 s fast, less than the
// window W (about 2 s): doc.go's wipe bound promises tokens keep growing
// across a total wipe when the re-seeding engine's clock is behind the
// earlier seeder's by at most W, because nodes count again (and are
// re-marked) only W after the wipe. After a FLUSHALL of every backend a
// replica started then re-marks them at once, seeding from its clock: the
// next token of the same key is below the one given before.
func TestReview108TotalFlushNewReplicaTokenGoesDown(t *testing.T) {
	fs, ns := fakes(3)
	seed := CounterSeed(time.Now().Add(1500 * time.Millisecond)) // a bootstrap by a host 1.5 s fast
	for _, f := range fs {
		f.mu.Lock()
		f.raiseLocked(TokenKey, seed)
		f.marker = NewMarker(f.info.RunID)
		f.mu.Unlock()
	}
	opts := []Option{WithMaxTTL(2 * time.Second), WithNodeTimeout(100 * time.Millisecond), WithHealthInterval(10 * time.Millisecond)}
	e := newEngine(t, ns, opts...)
	ctx := context.Background()
	review106Steady(t, e)
	a, err := e.AcquireFenced(ctx, "k", "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Release(ctx, "k", "a"); err != nil {
		t.Fatal(err)
	}
	t.Logf("window %s; a's token %d", e.QuarantineWindow(), a.Token)
	for _, f := range fs {
		f.flush()
	}
	e2 := newEngine(t, ns, opts...)
	var b Grant
	eventuallyTrue(t, func() bool {
		b, err = e2.AcquireFenced(ctx, "k", "b", time.Second)
		return err == nil
	})
	t.Logf("b's token %d, through a replica started after the flush", b.Token)
	if b.Token <= a.Token {
		t.Fatalf("fencing token went down: a had %d, b (a later holder of k) got %d", a.Token, b.Token)
	}
}
