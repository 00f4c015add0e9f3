package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// helper-94's findings on the fixed RFairLock: a place left behind on a
// node that missed a grant (paused at the time). Both failed on 0d99b4c,
// 3 runs of 3 (helper-94), and pass since the place of a granted owner is
// taken out on every node, a paused one asked again until it answers, and
// a ticket fewer than a quorum answered is never spread.

func fairTickets(t *testing.T, h *harness.Harness, f *fairClient) []float64 {
	t.Helper()
	queue := quorum.FairQueueKey(f.keys()[1])
	var out []float64
	for _, b := range h.Backend {
		v, err := b.Client().ZScore(t.Context(), queue, f.owner).Result()
		if err != nil {
			v = -1
		}
		out = append(out, v)
	}
	return out
}

// TestFairLockStalePlaceDoesNotOvertake: Redisson reuses "<uuid>:<threadId>" for
// every lock() of a thread. A is granted while backend 2 is paused (its
// ops dropped: the grant's leave-the-queue never reaches it, and the
// Dequeue after a grant only covers refusals that were collected). A's old
// place (ticket 1) stays on backend 2. Later B queues (ticket 2) while C
// holds the lock; then A's thread calls lock() again while one backend is
// slow: only one live node said A is not queued (<= N-Q), so the first
// fix put A back with its OLD ticket 1, ahead of B, on a majority, and
// when C unlocked, A (who came after B) was granted first. B must be.
func TestFairLockStalePlaceDoesNotOvertake(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name = "fair:{stale}"
	mk := func(o string) *fairClient { return &fairClient{c: c, name: name, owner: o, waitMS: 20000} }
	holder, a, b, cc := mk("H:1"), mk("A:1"), mk("B:1"), mk("C:1")
	if held, _, err := holder.try(t, 4000); !held || err != nil {
		t.Fatalf("H lock() = %v, %v", held, err)
	}
	if held, _, err := a.try(t, 30000); held || err != nil {
		t.Fatalf("A first lock() = %v, %v", held, err)
	}
	t.Logf("A queued: %v", fairTickets(t, h, a))
	h.Backend[2].Pause()
	if v, err := holder.unlock(t, 4000); err != nil {
		t.Logf("H unlock = %v, %v", v, err)
	}
	held, _, err := a.try(t, 30000)
	if !held || err != nil {
		h.Backend[2].Resume()
		t.Fatalf("A lock() after H's unlock with backend 2 paused = %v, %v", held, err)
	}
	h.Backend[2].Resume()
	time.Sleep(300 * time.Millisecond)
	t.Logf("A granted; A's places now: %v", fairTickets(t, h, a))
	if v, err := a.unlock(t, 30000); v != int64(1) || err != nil {
		t.Fatalf("A unlock = %v, %v", v, err)
	}
	time.Sleep(4500 * time.Millisecond) // H's hold on backend 2 (if its release was dropped) ends
	if held, _, err := cc.try(t, 30000); !held || err != nil {
		t.Fatalf("C lock() = %v, %v", held, err)
	}
	// B queues behind C.
	if held, _, err := b.try(t, 30000); held || err != nil {
		t.Fatalf("B lock() = %v, %v", held, err)
	}
	if held, _, err := b.try(t, 30000); held || err != nil {
		t.Fatalf("B lock() = %v, %v", held, err)
	}
	t.Logf("B queued: %v; A's stale places: %v", fairTickets(t, h, b), fairTickets(t, h, a))
	// A's thread locks again, after B queued; backend 1 is slow for this round.
	h.Backend[1].Pause()
	held, wait, err := a.try(t, 30000)
	h.Backend[1].Resume()
	t.Logf("A's new lock() = %v, %v, %v; A's places now: %v", held, wait, err, fairTickets(t, h, a))
	time.Sleep(300 * time.Millisecond)
	if held, _, err := a.try(t, 30000); held || err != nil { // an ordinary retry, all up
		t.Fatalf("A retry = %v, %v", held, err)
	}
	t.Logf("after A's retry: A %v, B %v", fairTickets(t, h, a), fairTickets(t, h, b))
	if v, err := cc.unlock(t, 30000); v != int64(1) || err != nil {
		t.Fatalf("C unlock = %v, %v", v, err)
	}
	bHeld, _, berr := b.try(t, 30000)
	aHeld, _, aerr := a.try(t, 30000)
	t.Logf("after C's unlock: B (queued first) %v %v; A (came back later) %v %v", bHeld, berr, aHeld, aerr)
	if aHeld && !bHeld {
		t.Fatalf("A, whose lock() came after B had queued, was granted ahead of B (FIFO broken by requeue with a stale ticket)")
	}
	if !bHeld {
		t.Fatalf("B, first in line, was not granted")
	}
	_ = redis.Nil
}

// TestFairLockStaleHeadLeavesAfterThePause: as above, A is granted while backend 2
// is paused and its old place stays there, at the head (lease: the wait
// it was told + its thread wait time: 5.5 min with Redisson's defaults).
// A unlocks; backend 1 dies. The lock is free on both live backends and
// nobody waits but B; the first fix refused every lock() of B (backend 2
// kept the turn for A's stale place) until that place lapsed. Now the
// paused backend is asked again to drop it once it answers.
func TestFairLockStaleHeadLeavesAfterThePause(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name = "fair:{stalehead}"
	mk := func(o string) *fairClient { return &fairClient{c: c, name: name, owner: o, waitMS: 20000} }
	holder, a, b := mk("H:1"), mk("A:1"), mk("B:1")
	if held, _, err := holder.try(t, 4000); !held || err != nil {
		t.Fatalf("H lock() = %v, %v", held, err)
	}
	if held, _, err := a.try(t, 30000); held || err != nil {
		t.Fatalf("A first lock() = %v, %v", held, err)
	}
	h.Backend[2].Pause()
	_, _ = holder.unlock(t, 4000)
	held, _, err := a.try(t, 30000)
	h.Backend[2].Resume()
	if !held || err != nil {
		t.Fatalf("A lock() after H's unlock with backend 2 paused = %v, %v", held, err)
	}
	time.Sleep(300 * time.Millisecond)
	if v, err := a.unlock(t, 30000); v != int64(1) || err != nil {
		t.Fatalf("A unlock = %v, %v", v, err)
	}
	t.Logf("A's places after its unlock: %v", fairTickets(t, h, a))
	time.Sleep(4500 * time.Millisecond) // H's hold on backend 2 (its release dropped) ends
	h.Backend[1].Kill()
	start := time.Now()
	held, err = b.lock(t, 30000, 10*time.Second, nil)
	t.Logf("B's lock() over 10s with the lock free on 2 of 3 backends: %v, %v (%v); A's places: %v", held, err, time.Since(start), fairTickets(t, h, a))
	if !held {
		t.Fatalf("B never got the free lock with 2 of 3 backends up: A's stale place on backend 2 keeps the turn")
	}
}
