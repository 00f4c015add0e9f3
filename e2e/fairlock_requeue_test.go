package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestFairLockFailedRoundKeepsItsPlace: a queued waiter's try that a
// minority grants (the lock is free there, the waiter first in line) and
// the rest refuse (the holder still holds it there) fails, and the waiter
// keeps its place with the ticket it had on every backend. The first
// version took it out of the queue where it was granted and queued it
// again at the back: in the fault suite, 85 pairs of waiters were granted
// out of order.
func TestFairLockFailedRoundKeepsItsPlace(t *testing.T) {
	h := harness.New(t, 5, nil)
	c := h.Client()
	const name = "fair:{requeue}"
	holder := &fairClient{c: c, name: name, owner: "uuid-h:1", waitMS: 300000}
	waiter := &fairClient{c: c, name: name, owner: "uuid-w:2", waitMS: 300000}
	if held, _, err := holder.try(t, 30000); !held || err != nil {
		t.Fatalf("the holder's lock() = %v, %v", held, err)
	}
	if held, _, err := waiter.try(t, 30000); held || err != nil {
		t.Fatalf("the waiter's first lock() = %v, %v", held, err)
	}
	queue := quorum.FairQueueKey(waiter.keys()[1])
	tickets := func() []float64 {
		var out []float64
		for _, b := range h.Backend {
			v, err := b.Client().ZScore(t.Context(), queue, waiter.owner).Result()
			if err != nil {
				v = -1 // not queued there
			}
			out = append(out, v)
		}
		return out
	}
	before := tickets()
	for i, v := range before {
		if v <= 0 {
			t.Fatalf("the waiter is not queued on backend %d: %v", i, before)
		}
	}
	// The holder's lock is gone from two backends (as after a restart):
	// there the lock is free and the waiter first in line.
	for _, i := range []int{3, 4} {
		if err := h.Backend[i].Client().Del(t.Context(), name, quorum.MetaKey(name)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if held, wait, err := waiter.try(t, 30000); held || err != nil || wait <= 0 {
		t.Fatalf("the waiter's lock() while a majority still holds it = %v, %v, %v; want refused with a wait", held, wait, err)
	}
	after := tickets()
	for i := range before {
		if after[i] != before[i] {
			t.Fatalf("the waiter's tickets went from %v to %v: a failed round cost it its place", before, after)
		}
	}
	for _, i := range []int{3, 4} {
		if n, _ := h.Backend[i].Client().Exists(t.Context(), name).Result(); n != 0 {
			t.Errorf("backend %d keeps the failed round's hold", i)
		}
	}
}

// TestFairLockAfterAFloodOfLapsedPlaces: a client may queue any number of
// owners in a fair lock's queue (a place is the client's own naming, with
// a lease as short as 1 ms); when ten thousand of them have lapsed, the
// next fair acquire still works (the first version purged them all in one
// ZREM, past Lua's unpack limit: every acquire of the lock failed).
func TestFairLockAfterAFloodOfLapsedPlaces(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name = "fair:{flood}"
	tickets := quorum.FairQueueKey(redissonName("redisson_lock_queue", name))
	leases := quorum.FairQueueLeaseKey(redissonName("redisson_lock_queue", name))
	for _, b := range h.Backend {
		bc := b.Client()
		for from := 0; from < 10000; from += 1000 {
			var tz, lz []redis.Z
			for i := from; i < from+1000; i++ {
				tz = append(tz, redis.Z{Score: float64(i + 1), Member: fmt.Sprint("ghost:", i)})
				lz = append(lz, redis.Z{Score: 1, Member: fmt.Sprint("ghost:", i)}) // lapsed long ago
			}
			if err := bc.ZAdd(t.Context(), tickets, tz...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := bc.ZAdd(t.Context(), leases, lz...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		bc.PExpire(t.Context(), tickets, time.Minute)
		bc.PExpire(t.Context(), leases, time.Minute)
	}
	f := &fairClient{c: c, name: name, owner: "uuid-f:1", waitMS: 5000}
	held, err := f.lock(t, 5000, 10*time.Second, nil)
	if !held || err != nil {
		t.Fatalf("lock() after the lapsed places = %v, %v", held, err)
	}
}
