package quorum

import (
	"context"
	"testing"
	"time"
)

func review106Steady(t *testing.T, e *Engine) {
	t.Helper()
	eventuallyTrue(t, func() bool {
		for _, st := range e.Status() {
			if !st.Intact || st.Why != "" || !st.Up {
				return false
			}
		}
		return true
	})
}

// review106: a persistent (appendfsync always) backend flushed and then
// restarted before this engine's next check comes back with a new run_id and
// no marker at all while the others carry theirs. observe takes the
// persistent-restart branch ("fsyncs every write, so no quarantine") and
// never looks at the marker; quarantine's "persistent" case comes before the
// "lacks the marker the others carry" one. It votes at once with the lock it
// lost.
func TestReview106PersistentFlushedThenRestartedVotesAtOnce(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	e := newEngine(t, ns, WithMaxTTL(400*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	fs[2].setOpFault("setnx", errRefused, nil)
	a, err := e.Acquire(ctx, "k", "a", 380*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].flush() // FLUSHALL (persisted), then a restart: new run_id, nothing on it
	fs[0].restart(true)
	time.Sleep(50 * time.Millisecond)
	t.Logf("node 0 after the flush and restart: %+v", e.Status()[0])
	t.Logf("a granted %+v", a)
	g, err := secondOwner(t, e, "k", 380*time.Millisecond, aAt, 300*time.Millisecond)
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock on node 1: two owners", g)
	}
	t.Logf("b: %v", err)
}

// review106: a backend that votes but is not intact (a persistent backend
// restarted, carrying its old run's marker, not repaired yet because too
// few intact nodes can be read: node 1 is down) is flushed. Its marker of
// the old run vanishes without a restart, but observe checks a marker only
// while h.intact: the flush is never seen, by this engine or any other. When
// node 1 comes back, a second owner is granted on nodes 1 and 2.
func TestReview106FlushOfUnrepairedVotingBackendNeverSeen(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	e := newEngine(t, ns, WithMaxTTL(3*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	// node 1 unreachable
	fs[1].mu.Lock()
	fs[1].infoErr, fs[1].err = errRefused, errRefused
	fs[1].mu.Unlock()
	eventuallyTrue(t, func() bool { return !e.Status()[1].Up })
	// node 2 restarts keeping everything (appendfsync always): old run's marker
	fs[2].mu.Lock()
	fs[2].info = NodeInfo{RunID: fs[2].info.RunID + "+", Persistent: true}
	info, w := fs[2].info, fs[2].watch
	fs[2].mu.Unlock()
	w(info)
	eventuallyTrue(t, func() bool { st := e.Status()[2]; return st.RunID == info.RunID && st.Why == "" })
	t.Logf("node 2 restarted: %+v (marker %q)", e.Status()[2], fs[2].marker)
	a, err := e.Acquire(ctx, "k", "a", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].flush()
	time.Sleep(100 * time.Millisecond)
	t.Logf("node 2 after the flush: %+v", e.Status()[2])
	fs[1].mu.Lock()
	fs[1].infoErr, fs[1].err = nil, nil
	fs[1].mu.Unlock()
	eventuallyTrue(t, func() bool { st := e.Status()[1]; return st.Up && st.Why == "" })
	t.Logf("node 2 once node 1 is back: %+v", e.Status()[2])
	t.Logf("a granted %+v", a)
	g, err := secondOwner(t, e, "k", 3*time.Second, aAt, 2500*time.Millisecond)
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock on node 0: two owners", g)
	}
	t.Logf("b: %v", err)
}
