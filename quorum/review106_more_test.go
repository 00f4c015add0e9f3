package quorum

import (
	"context"
	"strings"
	"testing"
	"time"
)

// review106: a replica (re)started after a persistent backend was flushed
// sees it for the first time with no marker while the others carry theirs.
// quarantine's "persistent" case comes before the "lacks the marker the
// other backends carry" one: it counts at once (and is then re-marked by
// this replica), with the lock the flush lost.
func TestReview106NewReplicaCountsFlushedPersistentBackend(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
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
	e2 := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	t.Logf("new replica, node 0: %+v; old replica: %+v", e2.Status()[0], e.Status()[0])
	g, err := e2.Acquire(ctx, "k", "b", 2*time.Second)
	if time.Since(at) > 1500*time.Millisecond {
		t.Skip("too slow")
	}
	if err == nil {
		t.Fatalf("new replica granted b %+v while a holds the lock on node 1: two owners", g)
	}
	t.Logf("b: %v", err)
}

// review106: during a rolling upgrade a replica of the previous release
// takes a "<run_id> <id>" marker for not intact (its check is marker ==
// run_id) and repairs the node with its own repair.lua, an unconditional
// SET of the bare run_id. Every upgraded replica then sees the marker
// rewritten under the same run and quarantines the node for a full window.
func TestReview106OldReplicaRemarkIsAFalseFlush(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	review106Steady(t, e)
	fs[2].mu.Lock()
	t.Logf("node 2 marker %q", fs[2].marker)
	fs[2].marker = fs[2].info.RunID // the old release's repair: SET __redlock:intact <run_id>
	fs[2].mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	if st := e.Status()[2]; strings.Contains(st.Why, "vanished") {
		t.Fatalf("node 2 quarantined as flushed, nothing lost: %s", st.Why)
	}
}
