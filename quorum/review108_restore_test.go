package quorum

import (
	"context"
	"maps"
	"testing"
	"time"
)

// fakeSnapshot is a copy of a fake backend's dataset (an AOF/RDB backup).
type fakeSnapshot struct {
	data     map[string]fakeEntry
	counters map[string]bool
	engines  map[string]int64
	marker   string
	record   time.Duration
}

func (f *fakeNode) snapshot() fakeSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fakeSnapshot{maps.Clone(f.data), maps.Clone(f.counters), maps.Clone(f.engines), f.marker, f.record}
}

// restoreRestart restarts the backend (a new run, announced by a new
// connection) on the dataset s: a persistent backend brought back from a
// backup of its append-only file or volume.
func (f *fakeNode) restoreRestart(s fakeSnapshot) {
	f.mu.Lock()
	f.data, f.counters, f.engines, f.marker, f.record = s.data, s.counters, s.engines, s.marker, s.record
	f.mu.Unlock()
	f.restart(true)
}

// review108: a backend that fsyncs every write is brought back from a copy
// of its data taken seconds earlier (a volume snapshot, a backup of its
// appendonlydir): a new run_id, persistent, carrying its old run's marker
// and this replica's presence key as they were in the copy, without the
// locks written since. Presence only says "there" or "gone", so the copy's
// presence reads as "there": no flush; the marker of an earlier run on a
// persistent backend is a restart that lost nothing. Lock a, written after
// the copy on nodes 0 and 1 (node 2 refused), is lost on node 0, which
// votes at once: b is granted on 0 and 2. Fixed: the presence carries the
// sequence number of this engine's last check, and the copy's is older.
func TestReview108PersistentRestoredFromCopyVotesAtOnce(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	e := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	backup := fs[0].snapshot()
	checkedAgain(t, e, 0) // a check since the copy (a restore takes longer than a health interval)
	fs[2].setOpFault("setnx", errRefused, nil)
	if _, err := e.Acquire(ctx, "k", "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].restoreRestart(backup)
	checkedAgain(t, e, 0)
	t.Logf("node 0 after the restore: %+v", e.Status()[0])
	g, err := secondOwner(t, e, "k", 2*time.Second, aAt, 1500*time.Millisecond)
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock on node 1: two owners", g)
	}
	t.Logf("b: %v", err)
}
