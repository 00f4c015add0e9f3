package quorum

import (
	"context"
	"strings"
	"testing"
	"time"
)

// review107: backend 0 restarts empty (not persistent). Replica A (checks
// every 10ms) and replica B (every 1s, the default) both quarantine it,
// with h.marker "" (a new run without a marker). A's window ends first: A
// counts it, repairs it (marker M1) and grants lock a on nodes 0 and 1.
// Node 0 is then flushed (M1 gone) before B ever read M1. A sees the flush
// at its next check. B's checks read "" where it knew "": observe judges a
// marker only when h.marker != "", so B never sees the flush; once B's
// restart quarantine (from its own sight of the restart) runs out, node 0
// counts for B, which grants b on nodes 0 and 2 inside a's window. Fixed:
// B's presence (EngineKey), written on the new run, is gone too.
func TestReview107FlushBeforeOtherReplicaReadsNewMarker(t *testing.T) {
	fs, ns := fakes(3)
	const ttl = 2 * time.Second
	a := newEngine(t, ns, WithMaxTTL(ttl), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	b := newEngine(t, ns, WithMaxTTL(ttl), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(time.Second))
	ctx := context.Background()
	review106Steady(t, a)
	review106Steady(t, b)
	// node 0 restarts empty; each replica sees it at its own next check
	fs[0].mu.Lock()
	fs[0].data, fs[0].counters, fs[0].marker, fs[0].record = map[string]fakeEntry{}, map[string]bool{}, "", 0
	fs[0].info = NodeInfo{RunID: fs[0].info.RunID + "+"}
	fs[0].mu.Unlock()
	restartAt := time.Now()
	eventuallyTrue(t, func() bool { return strings.Contains(b.Status()[0].Why, "restarted") })
	t.Logf("B sees the restart %s after it", time.Since(restartAt))
	for deadline := time.Now().Add(10 * time.Second); !a.Status()[0].Intact; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A never repaired node 0")
		}
	}
	fs[2].setOpFault("setnx", errRefused, nil)
	g, err := a.Acquire(ctx, "k", "a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].mu.Lock()
	m1 := fs[0].marker
	fs[0].mu.Unlock()
	fs[0].flush()
	t.Logf("A repaired node 0 (marker %q), granted a %+v, node 0 flushed; B: %+v", m1, g, b.Status()[0])
	eventuallyTrue(t, func() bool { return strings.Contains(a.Status()[0].Why, "vanished") })
	t.Logf("A sees the flush: %s", a.Status()[0].Why)
	// B's restart quarantine (from its own sight of the restart) ends
	// inside a's window: from then on only B's own sight of the flush keeps
	// node 0 out. B asks for the lock until a's window nearly ends.
	for n := 0; time.Since(aAt) < ttl-200*time.Millisecond; n++ {
		if g2, err := b.Acquire(ctx, "k", "b", 100*time.Millisecond); err == nil {
			t.Fatalf("B granted b %+v %s after A granted a (held on node 1, %s TTL): two owners; B says node 0: %+v; A: %s",
				g2, time.Since(aAt), ttl, b.Status()[0], a.Status()[0].Why)
		} else if n == 0 {
			t.Logf("b: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("B on node 0 at the end of a's window: %+v", b.Status()[0])
}
