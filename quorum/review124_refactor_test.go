package quorum

// Review 124 (helper): 468fe6e, a round's settled as a WaitGroup and its
// delivery inside it; newRoundID with one allocation.

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The id is exactly the old prefix "." base36(seq), for any prefix length
// and any sequence number, and ids do not collide under concurrency.
func TestReview124RoundIDFormat(t *testing.T) {
	_, ns := fakes(3)
	e := newEngine(t, ns)
	for _, prefix := range []string{e.roundPrefix, "", strings.Repeat("f", 100)} {
		e.roundPrefix = prefix
		for _, s := range []uint64{0, 1, 34, 35, 36, 1 << 32, math.MaxUint64 - 1, math.MaxUint64} {
			e.roundSeq.Store(s)
			want := prefix + "." + strconv.FormatUint(s+1, 36)
			if got := e.newRoundID(); got != want {
				t.Fatalf("prefix %q seq %d: got %q, want %q", prefix, s, got, want)
			}
		}
	}
	e.roundPrefix = newRoundPrefix([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	e.roundSeq.Store(0)
	if a := testing.AllocsPerRun(100, func() { _ = e.newRoundID() }); a != 1 {
		t.Errorf("newRoundID: %v allocations, want 1", a)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			local := make([]string, 0, 2000)
			for range 2000 {
				local = append(local, e.newRoundID())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
}

// A round's settled: finish's synchronous path (every node in) and its
// background one (stragglers) both release every waiter, and only once the
// stragglers are in; waiters see the drained round (no race).
func TestReview124SettledBothPaths(t *testing.T) {
	ls, ns := lateNodes(5)
	e := newEngine(t, ns, WithNodeTimeout(time.Second))
	op := Op{Kind: OpRead, Key: "k"}

	r := e.start(nil, op, time.Second, false)
	r.drain()
	unlocked := false
	r.finish(func() { unlocked = true })
	r.settled.Wait() // synchronous path: returns at once
	if !unlocked || r.arrived != 5 {
		t.Fatalf("sync path: unlocked=%v arrived=%d", unlocked, r.arrived)
	}

	for i := 3; i < 5; i++ {
		ls[i].after = 100 * time.Millisecond
	}
	r = e.start(nil, op, time.Second, false)
	r.collect()
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r.settled.Wait()
			got.Add(int32(r.arrived))
		})
	}
	time.Sleep(20 * time.Millisecond)
	var un atomic.Bool
	r.finish(func() { un.Store(true) })
	wg.Wait()
	if !un.Load() || got.Load() != 4*5 {
		t.Fatalf("async path: unlocked=%v sum of arrived=%d, want 20", un.Load(), got.Load())
	}
	for _, l := range ls {
		l.inflight.Wait()
	}
}

// Nodes answer into a round's own delivery long after the round was
// finished and dropped (GC in between), with an observer reading the
// delivery's fields, more than 7 nodes (slots not inline), and many rounds
// at once: no race, no lost or misdirected answer.
func TestReview124LateAnswersIntoDroppedRounds(t *testing.T) {
	var observed atomic.Int64
	ls, ns := lateNodes(9)
	e := newEngine(t, ns, WithNodeTimeout(time.Second), WithObserver(func(string, time.Duration, error) { observed.Add(1) }))
	for i := 5; i < 9; i++ {
		ls[i].after = 60 * time.Millisecond
	}
	const rounds = 40
	var wg sync.WaitGroup
	var bad atomic.Int32
	for k := range rounds {
		wg.Go(func() {
			r := e.start(nil, Op{Kind: OpRead, Key: fmt.Sprint("k", k)}, time.Second, false)
			r.collect()
			done := make(chan struct{})
			r.finish(func() { close(done) })
			<-done
			if r.arrived != 9 {
				bad.Add(1)
			}
			for j := range r.d.slots {
				if s := &r.d.slots[j]; s.d != &r.d || s.at != j || s.i != r.idx[j] {
					bad.Add(1)
				}
			}
		})
	}
	// Rounds abandoned right after start: their late answers land in
	// rounds nobody holds any more.
	for k := range rounds {
		r := e.start(nil, Op{Kind: OpRead, Key: fmt.Sprint("x", k)}, time.Second, false)
		r.collect()
		_ = r
	}
	runtime.GC()
	wg.Wait()
	for _, l := range ls {
		l.inflight.Wait()
	}
	runtime.GC()
	if bad.Load() != 0 {
		t.Fatalf("%d bad rounds", bad.Load())
	}
	if n := observed.Load(); n != 2*rounds*9 {
		t.Fatalf("observer saw %d answers, want %d", n, 2*rounds*9)
	}
}

// Acquire with stragglers and Revoke (revocation.run waits on settled),
// concurrently, under -race; plus releases with lock-delay marks (unmark's
// allocating path).
func TestReview124GrantsWithStragglers(t *testing.T) {
	ls, ns := lateNodes(5)
	e := newEngine(t, ns, WithNodeTimeout(time.Second))
	for i := 3; i < 5; i++ {
		ls[i].after = 50 * time.Millisecond
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	for k := range 10 {
		wg.Go(func() {
			g, err := e.Acquire(ctx, fmt.Sprint("lock", k), "v", 10*time.Second)
			if err != nil {
				t.Errorf("Acquire: %v", err)
				return
			}
			g.Revoke()
			g.Revoke() // twice: Wait on a done WaitGroup returns
		})
	}
	wg.Wait()
	for _, l := range ls {
		l.inflight.Wait()
	}

	fs := []*fakeNode{newFake("a"), newFake("b"), newFake("c")}
	nodes := make([]Node, len(fs))
	for i, f := range fs {
		f.marks = true
		nodes[i] = f
	}
	e2 := newEngine(t, nodes, WithNodeTimeout(time.Second))
	for k := range 10 {
		key := fmt.Sprint("m", k)
		if _, err := e2.Acquire(ctx, key, "v", time.Second); err != nil {
			t.Fatal(err)
		}
		if err := e2.Release(ctx, key, "v"); err != nil {
			t.Fatal(err)
		}
		if _, err := e2.Acquire(ctx, key, "w", time.Second); err != nil {
			t.Fatalf("re-acquire after release with marks: %v", err)
		}
	}
}
