package quorum

import (
	"context"
	"testing"
	"time"
)

// review110: two of three backends restart at once (without fsync). Long
// after the window they vote for replica A, but tendCounters never marks
// them: it copies counters from N-Q+1 = 2 intact others, and only node 2
// is intact; the "no node marked" branch needs none intact. So they stay
// unmarked for good, and since e55b182 (28a4c20: while another carries
// its marker) every replica started later waits a whole window for them,
// however long ago they restarted: NOQUORUM at each replica restart,
// rolling restart or scale-up, forever (before 28a4c20 it needed a
// majority of the others intact).
func TestReview110MajorityRestartNeverMarkedNewReplicaWaits(t *testing.T) {
	fs, ns := fakes(3)
	opts := []Option{WithMaxTTL(300 * time.Millisecond), WithNodeTimeout(100 * time.Millisecond), WithHealthInterval(10 * time.Millisecond)}
	a := newEngine(t, ns, opts...)
	review106Steady(t, a)
	fs[0].restart(false)
	fs[1].restart(false)
	window := a.QuarantineWindow()
	time.Sleep(4 * window) // the restart is long past
	ctx := context.Background()
	if _, err := a.Acquire(ctx, "k1", "x", 250*time.Millisecond); err != nil {
		t.Fatalf("replica A, %s after the restarts: %v", 4*window, err)
	}
	for i, st := range a.Status() {
		t.Logf("replica A, node %d: intact %v marker %q why %q", i, st.Intact, fs[i].marker, st.Why)
	}
	for _, f := range fs[:2] { // their uptime, as INFO reports it now
		f.mu.Lock()
		f.info.Uptime = 4 * window
		f.mu.Unlock()
	}
	b := newEngine(t, ns, opts...) // a replica restarted or added now
	_, err := b.Acquire(ctx, "k2", "y", 250*time.Millisecond)
	t.Logf("replica B at start: %v; node 0: %q", err, b.Status()[0].Why)
	if err != nil {
		t.Errorf("replica B refuses locks %s after the backends' restart: they will never be marked, so every replica start costs a window", 4*window)
	}
}

// review110 (pre-existing, not of 28a4c20/e55b182): two of three backends
// that fsync every write restart normally (lost nothing). Neither carries
// its new run's marker, and repair needs 2 intact others: only node 2 is.
// Plain locks work (persistent, marked), but every fenced acquire answers
// NOQUORUM for good, however long one waits; restarting node 2 too (or
// flushing it) is what heals it.
func TestReview110PersistentMajorityRestartFencedNeverReturns(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	a := newEngine(t, ns, WithMaxTTL(300*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	review106Steady(t, a)
	ctx := context.Background()
	if _, err := a.AcquireFenced(ctx, "f0", "x", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	fs[0].restart(true)
	fs[1].restart(true)
	time.Sleep(5 * a.QuarantineWindow())
	if _, err := a.Acquire(ctx, "k", "x", 250*time.Millisecond); err != nil {
		t.Fatalf("plain lock: %v", err)
	}
	_, err := a.AcquireFenced(ctx, "f1", "x", 250*time.Millisecond)
	for i, st := range a.Status() {
		t.Logf("node %d: intact %v why %q", i, st.Intact, st.Why)
	}
	if err != nil {
		t.Errorf("fenced lock %s after a normal restart of two persistent backends: %v", 5*a.QuarantineWindow(), err)
	}
}
