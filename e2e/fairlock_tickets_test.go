package e2e

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestFairLockLeftPlaceIsNotTheNewOne (helper-95): the removal of a
// granted owner's place, asked again of a backend that was down during the
// grant, is guarded by the ticket the owner left with. Tickets were the
// largest queued plus one, 1 again once the queue emptied: the same owner
// (a Redisson thread's "<uuid>:<threadId>") queueing again got the same
// ticket, and the retry removed its live place; with one more backend
// down, a waiter that queued after it was granted first. Tickets are now
// at least the time in µs: never the one it left.
func TestFairLockLeftPlaceIsNotTheNewOne(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name, lease = "fair:{reuse}", 60000
	mk := func(o string) *fairClient { return &fairClient{c: c, name: name, owner: o, waitMS: 60000} }
	holder, a, b, cc := mk("H:1"), mk("A:1"), mk("B:1"), mk("C:1")
	if held, _, err := holder.try(t, lease); !held || err != nil {
		t.Fatalf("H lock() = %v, %v", held, err)
	}
	if held, _, err := a.try(t, lease); held || err != nil {
		t.Fatalf("A lock() = %v, %v", held, err)
	}
	t.Logf("A queued: %v", fairTickets(t, h, a))
	h.Backend[2].Kill()
	if v, err := holder.unlock(t, lease); err != nil {
		t.Fatalf("H unlock = %v, %v", v, err)
	}
	if held, _, err := a.try(t, lease); !held || err != nil {
		t.Fatalf("A lock() with backend 2 down = %v, %v", held, err)
	}
	if v, err := a.unlock(t, lease); v != int64(1) || err != nil {
		t.Fatalf("A unlock = %v, %v", v, err)
	}
	if held, _, err := cc.try(t, lease); !held || err != nil {
		t.Fatalf("C lock() = %v, %v", held, err)
	}
	time.Sleep(12 * time.Second) // leftQueue's retries now every 5 s
	h.Backend[2].Restart()
	restarted := time.Now()
	// A's thread locks again (C holds): it queues again, everywhere (the
	// restarted backend as soon as the engine uses it again).
	for {
		if held, _, err := a.try(t, lease); held || err != nil {
			t.Fatalf("A lock() again = %v, %v", held, err)
		}
		if fairTickets(t, h, a)[2] > 0 {
			break
		}
		if time.Since(restarted) > 20*time.Second {
			t.Fatalf("A never queued on the restarted backend: %v", fairTickets(t, h, a))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("backend 2 used again after %v", time.Since(restarted))
	t.Logf("A queued again: %v", fairTickets(t, h, a))
	if held, _, err := b.try(t, lease); held || err != nil {
		t.Fatalf("B lock() = %v, %v", held, err)
	}
	t.Logf("B queued: %v", fairTickets(t, h, b))
	time.Sleep(6 * time.Second) // one more of leftQueue's retries
	ta := fairTickets(t, h, a)
	t.Logf("A's places after the retry: %v; B's %v", ta, fairTickets(t, h, b))
	removed := ta[2] < 0
	h.Backend[0].Kill() // one of three: within what the quorum tolerates
	if v, err := cc.unlock(t, lease); err != nil {
		t.Logf("C unlock = %v, %v", v, err)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		held, _, err := a.try(t, lease)
		if held {
			if removed {
				t.Fatalf("A's live place was removed on backend 2 (%v) but A still went first", ta)
			}
			return
		}
		if held, _, _ := b.try(t, lease); held {
			t.Fatalf("B, queued after A, was granted first (A's live place removed on backend 2 by leftQueue's retry: %v; A's err %v)", ta, err)
		}
	}
	t.Fatalf("nobody granted; A's places %v", ta)
}

// TestFairLockQueueIsNotAKeysWaitQueue (helper-95): a fair lock's queue
// was kept under QueueKey("redisson_lock_queue:{x}"), also the LOCK.ACQUIRE
// ... WAIT queue of the key named "redisson_lock_queue:{x}": that key's
// waiter sat in x's fair queue and shut out every fair acquirer of the
// free lock x while it waited. Fair queues are in names of the proxy's own.
func TestFairLockQueueIsNotAKeysWaitQueue(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name = "fair:{x}"
	f := &fairClient{c: c, name: name, owner: "F:1", waitMS: 20000}
	k := f.keys()[1] // "redisson_lock_queue:{fair:{rev95x}}" ... a key of its own
	if v, err := c.Do(t.Context(), "LOCK.ACQUIRE", k, "holder", 20000).Result(); err != nil {
		t.Fatalf("LOCK.ACQUIRE %s = %v, %v", k, v, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c2 := h.Client()
		v, err := c2.Do(t.Context(), "LOCK.ACQUIRE", k, "waiter", 20000, "WAIT", 8000).Result()
		t.Logf("waiter of %s: %v, %v", k, v, err)
	}()
	time.Sleep(500 * time.Millisecond)
	held, wait, err := f.try(t, 10000)
	if !held {
		t.Errorf("the free fair lock %s was refused (wait %v, %v): a LOCK.ACQUIRE WAIT waiter of key %s sits in its fair queue", name, wait, err, k)
	}
	<-done
}
