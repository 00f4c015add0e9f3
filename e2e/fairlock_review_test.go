package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// helper-93's findings on the first RFairLock.

// TestFairLockAfterARestartAndAKill: waiter A queues; a backend restarts
// empty (A's place there is lost); B queues behind A; another backend is
// killed and the holder unlocks. The lock is free on the two live
// backends: A must get it. The first version left A's place lost on the
// restarted backend, where B was first: A was granted on one live backend,
// B on the other, every round NOQUORUM, for good.
func TestFairLockAfterARestartAndAKill(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	const name, lease = "fair:{restart}", 30000
	holder := &fairClient{c: c, name: name, owner: "H:1", waitMS: 60000}
	a := &fairClient{c: c, name: name, owner: "A:1", waitMS: 60000}
	b := &fairClient{c: c, name: name, owner: "B:1", waitMS: 60000}
	if held, _, err := holder.try(t, lease); !held || err != nil {
		t.Fatalf("the holder's lock() = %v, %v", held, err)
	}
	if held, _, err := a.try(t, lease); held || err != nil {
		t.Fatalf("A's first lock() = %v, %v", held, err)
	}
	h.Backend[2].Restart() // empty: it forgets the holder and A's place
	time.Sleep(500 * time.Millisecond)
	if held, _, err := a.try(t, lease); held || err != nil {
		t.Fatalf("A's lock() after the restart = %v, %v", held, err)
	}
	if held, _, err := b.try(t, lease); held || err != nil {
		t.Fatalf("B's first lock() = %v, %v", held, err)
	}
	h.Backend[0].Kill()
	_, _ = holder.unlock(t, lease) // its hold on the restarted backend was lost: 0 or NOQUORUM
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		held, _, err := a.try(t, lease)
		if held {
			return
		}
		if err != nil && !isNoQuorum(err) {
			t.Fatalf("A's lock(): %v", err)
		}
		if held, _, _ := b.try(t, lease); held {
			t.Fatal("B, queued behind A, was granted first")
		}
	}
	t.Fatal("with 2 of 3 backends up and the lock free, the waiter first in line was never granted (every round NOQUORUM)")
}

// TestFairLockQueueMustBeItsOwn: a fair lock's queue (KEYS[2]) must be the
// one Redisson derives from its name. Named after another key, it was that
// key's own wait queue: the waiter shut out SET NX, LOCK.ACQUIRE and RLock
// of that key while it waited.
func TestFairLockQueueMustBeItsOwn(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	keys := []string{"fair:own", "victim", "redisson_lock_timeout:{fair:own}"}
	_, err := c.Eval(t.Context(), clientScript(t, fairLockSHA), keys, 30000, "W:1", 60000, time.Now().UnixMilli()).Result()
	if err == nil || !strings.Contains(err.Error(), "redisson_lock_queue:{fair:own}") {
		t.Fatalf("a fair lock queued in 'victim' = %v; want refused naming its own queue", err)
	}
	if ok, err := c.SetNX(t.Context(), "victim", "someone", 5*time.Second).Result(); !ok || err != nil {
		t.Fatalf("SET victim NX = %v, %v", ok, err)
	}
	// Braces of its own: the queue is the name with the prefix.
	f := &fairClient{c: c, name: "{fair}:own", owner: "W:1", waitMS: 60000}
	k := []string{f.name, "redisson_lock_queue:{fair}:own", "redisson_lock_timeout:{fair}:own"}
	if err := c.Eval(t.Context(), clientScript(t, fairLockSHA), k, 30000, f.owner, f.waitMS, time.Now().UnixMilli()).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a fair lock with braces of its own = %v; want it taken", err)
	}
	if err := c.Eval(t.Context(), clientScript(t, fairLeaveSHA), []string{"victim", "t"}, "W:1", 1000).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR") {
		t.Fatalf("acquireFailed of queue 'victim' = %v; want refused", err)
	}
}
