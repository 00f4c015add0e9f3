package quorum

import (
	"context"
	"testing"
	"time"
)

// review110: the presence key only tells a replica that watched a backend
// before its restore that it was restored. A backend that fsyncs every
// write (exempt from restart quarantine) is brought back from a copy of
// its data taken before lock a was written on nodes 0 and 1 (node 2
// refused). Replica A, running throughout, quarantines node 0 (its
// presence reads older). Replica B, started after the restore (a scale-up,
// or a restart during the maintenance), has no presence history there:
// node 0 carries an old run's marker (marked), is persistent, and votes at
// once; b is granted through B on nodes 0 and 2 while a holds the lock
// on node 1. README only names "a copy restored within one health
// interval of being taken" as unseen.
func TestReview110PersistentRestoredBeforeNewReplicaSeesItVotes(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	backup := fs[0].snapshot() // last night's copy: marker there, lock a not
	opts := []Option{WithMaxTTL(2 * time.Second), WithNodeTimeout(100 * time.Millisecond), WithHealthInterval(10 * time.Millisecond)}
	a := newEngine(t, ns, opts...)
	review106Steady(t, a)
	ctx := context.Background()
	fs[2].setOpFault("setnx", errRefused, nil)
	if _, err := a.Acquire(ctx, "k", "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	v2, held2 := fs[2].get("k")
	t.Logf("node 2 after a's grant: %q %v", v2, held2)
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].restoreRestart(backup)
	b := newEngine(t, ns, opts...) // a second replica, first seeing node 0 after the restore
	checkedAgain(t, b, 0)
	t.Logf("node 0 seen by replica A: %q; by replica B: %q", a.Status()[0].Why, b.Status()[0].Why)
	g, err := secondOwner(t, b, "k", 2*time.Second, aAt, 1500*time.Millisecond)
	if err == nil {
		v1, _ := fs[1].get("k")
		t.Fatalf("b granted %+v through replica B while a holds the lock (node 1 has %q): two owners", g, v1)
	}
	t.Logf("b: %v", err)
}
