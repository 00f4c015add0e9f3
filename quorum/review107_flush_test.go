package quorum

import (
	"context"
	"testing"
	"time"
)

// review107: a persistent (appendfsync always) backend flushed and then
// restarted, known to the engine longer than the window. On a real backend
// the new run is first seen by a new connection (Watch: OnConnect / link
// identify), with zero readStart: observe's "restarted without its
// deployment marker" case needs judged, so it takes "fsyncs every write, so
// no quarantine" and overwrites h.marker with "" (fresh: new run_id). The
// next check then sees marker "" with h.marker "": nothing lost. The
// quarantine's "carries no marker" case runs from firstSeen (long ago):
// the node votes at once, and a second owner is granted. Fixed: the
// engine's presence (EngineKey), written before the flush, is gone.
func TestReview107PersistentFlushRestartSeenByWatchVotesAtOnce(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	e := newEngine(t, ns, WithMaxTTL(400*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	time.Sleep(time.Second) // known longer than the window
	fs[2].setOpFault("setnx", errRefused, nil)
	a, err := e.Acquire(ctx, "k", "a", 380*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].flush() // FLUSHALL (persisted), then a restart; the reconnect (Watch) sees it first
	fs[0].restart(true)
	checkedAgain(t, e, 0)
	t.Logf("node 0 after the flush and restart: %+v", e.Status()[0])
	g, err := e.Acquire(ctx, "k", "b", 380*time.Millisecond)
	asked := time.Since(aAt)
	t.Logf("a granted %+v; b asked %s after", a, asked)
	if asked > 300*time.Millisecond {
		t.Skipf("b asked %s after a's grant: says nothing", asked)
	}
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock on node 1: two owners", g)
	}
	t.Logf("b: %v", err)
}

// review107: a replica starting while a marked backend is unreachable
// meets a flushed backend (FLUSHALL keeps run_id and uptime) whose flush an
// older replica saw: it carries no marker, but othersIntact (1: the down
// node was never read) is below the quorum, so the "lacks the marker the
// others carry" case does not apply, and the uptime rule (since = now -
// uptime, hours ago) lets it vote at once. Lock a, held on nodes 0 and 1
// (2 refused), lost on 0 by the flush, node 1 down: b is granted on 0 and 2.
// Fixed: a node without its marker waits the window from first sight.
func TestReview107NewReplicaWithMarkedNodeDownCountsFlushedBackend(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	fs[2].setOpFault("setnx", errRefused, nil)
	if _, err := e.Acquire(ctx, "k", "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	fs[2].setOpFault("setnx", nil, nil)
	fs[0].flush()
	eventuallyTrue(t, func() bool { return e.Status()[0].Why != "" })
	t.Logf("old replica sees the flush: %s", e.Status()[0].Why)
	fs[1].mu.Lock()
	fs[1].infoErr, fs[1].err = errRefused, errRefused
	fs[1].mu.Unlock()
	e2 := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	t.Logf("new replica, node 0: %+v", e2.Status()[0])
	g, err := e2.Acquire(ctx, "k", "b", 2*time.Second)
	if time.Since(at) > 1500*time.Millisecond {
		t.Skip("too slow")
	}
	if err == nil {
		t.Fatalf("new replica granted b %+v while a holds the lock on node 1 (down): two owners; old replica says node 0: %s", g, e.Status()[0].Why)
	}
	t.Logf("b: %v", err)
}
