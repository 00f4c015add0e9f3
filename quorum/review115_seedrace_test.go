package quorum

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// review115SlowCounters is a fake node whose Counters answer, once armed,
// is held after it was read (a slow reply): the engine's marking acts on a
// snapshot taken before what happens on the nodes meanwhile.
type review115SlowCounters struct {
	*fakeNode
	armed   atomic.Bool
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (s *review115SlowCounters) Counters(ctx context.Context) (map[string]int64, error) {
	m, err := s.fakeNode.Counters(ctx)
	if s.armed.Load() {
		s.once.Do(func() {
			close(s.entered)
			select {
			case <-s.gate:
			case <-ctx.Done():
			}
		})
	}
	return m, err
}

// TestReview115SeedMarkingMissesCounterMadeMeanwhile: markSeeded (8f117c9)
// raised to the clock's seed only the counters it read (mergedCounters),
// then repaired each node with that map (repair.lua raised only the
// counters it was given). A lock counter first made on the nodes after the
// read and before the repair (an RFencedLock try that arrives while the
// nodes of a lost majority are being marked: hashacquire.lua starts it from
// TokenKey, which the loss removed, so at 1) was not raised: the nodes were
// marked intact with it at 1, and the lock's next token was far below the
// tokens it was given before. Here nodes 3 and 4 missed the lock's grants
// (down), nodes 0-2 restart empty, and node 4's counters reply (read
// last) is held after it was read, which widens the window. (First written for a total
// wipe, whose marking since reads no counters: the script that marks each
// node raises its own, review116's CI.)
func TestReview115SeedMarkingMissesCounterMadeMeanwhile(t *testing.T) {
	fs, _ := fakes(5)
	slow := &review115SlowCounters{fakeNode: fs[4], entered: make(chan struct{}), gate: make(chan struct{})}
	ns := []Node{fs[0], fs[1], fs[2], fs[3], slow}
	e := newEngine(t, ns, WithMaxTTL(300*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	review106Steady(t, e)
	ctx := context.Background()
	const lock, tok = "{f115}", "redisson_lock_token:{f115}"
	for _, f := range fs[3:] {
		f.setFault(errRefused, 0, nil)
	}
	var last int64
	for _, owner := range []string{"a:1", "b:1"} {
		g, err := e.AcquireHash(ctx, lock, owner, 250*time.Millisecond, tok)
		if err != nil {
			t.Fatal(err)
		}
		last = g.Token
		if _, err := e.ReleaseHash(ctx, lock, owner, 250*time.Millisecond, "", 0, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range fs[3:] {
		f.setFault(nil, 0, nil)
	}
	review106Steady(t, e)
	slow.armed.Store(true)
	for _, f := range fs[:3] {
		f.restart(false) // a majority loses its data
	}
	select {
	case <-slow.entered: // markSeeded read every node's counters; node 4's reply is on its way
	case <-time.After(10 * time.Second):
		t.Fatal("no marking read the nodes' counters")
	}
	// An RFencedLock try meanwhile: refused (too few intact nodes), but it
	// ran on every node and made the lock's counter on nodes 0-2 at 1.
	_, err := e.AcquireHash(ctx, lock, "c:1", 250*time.Millisecond, tok)
	t.Logf("try while the marking runs: %v; lock counter on the nodes %d %d %d %d %d", err,
		fs[0].counter(LockCounterKey(tok)), fs[1].counter(LockCounterKey(tok)), fs[2].counter(LockCounterKey(tok)),
		fs[3].counter(LockCounterKey(tok)), fs[4].counter(LockCounterKey(tok)))
	close(slow.gate)
	review106Steady(t, e)
	g, err := e.AcquireHash(ctx, lock, "d:1", 250*time.Millisecond, tok)
	t.Logf("tokens before the loss: last %d; after the marking: %d, %v (TokenKey %d %d %d)", last, g.Token, err,
		fs[0].counter(TokenKey), fs[1].counter(TokenKey), fs[2].counter(TokenKey))
	if err == nil && g.Token <= last {
		t.Errorf("RFencedLock token went from %d to %d across a majority's loss: the marking raised only the counters it had read", last, g.Token)
	}
}
