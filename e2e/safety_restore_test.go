package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault suite's row for restoring session locks (issue 23 E3).

// sessionRestore: a SESSION lock taken through replica 1 is held while
// backend 0 restarts empty and leaves its quarantine; its renewals must put
// the lock back on backend 0 (else one more fault would end it), while an
// owner on replica 2 asks for the key all along and must never get it.
func sessionRestore(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	holder := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
	other := suiteClient(addrs[1])
	defer holder.Close()
	defer other.Close()
	const key, ttl = "{restore}", 1500 * time.Millisecond
	var try nativeTry
	for end := time.Now().Add(10 * time.Second); !try.ok && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		try = lockAcquire(ctx, holder, key, "S", ttl.Milliseconds(), "SESSION")
	}
	if !try.ok {
		h.fail("not set up: the session lock was never granted: %v", try.err)
		return
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the contender
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			c := lockAcquire(ctx, other, key, fmt.Sprint("C", n), ttl.Milliseconds())
			var released time.Time
			if c.ok {
				released = time.Now()
				_ = other.Do(ctx, "LOCK.RELEASE", key, fmt.Sprint("C", n)).Err()
			}
			h.attempt(key, fmt.Sprint("C", n), c.sent, c.replied, ttl, c.ok, c.err, released)
		}
	}()
	e.redis[0].Restart()
	if !e.awaitState(holder, 0, 0, "quarantined") || !e.awaitState(holder, 0, 0, "up") {
		h.fail("not set up: backend 0 never quarantined, then up, on replica 1")
	}
	restored := false
	for end := time.Now().Add(15 * time.Second); !restored && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		v, _ := e.redis[0].Client().Get(ctx, key).Result()
		restored = v == "S"
	}
	if !restored {
		h.fail("the session lock was never restored on the backend that restarted empty")
	}
	still, err := holder.Do(ctx, "LOCK.RELEASE", key, "S").Int64()
	released := time.Now()
	if err != nil || still != 1 {
		h.fail("the session lock, held on a live replica, was lost: %v, %v", still, err)
	}
	h.attemptToken(key, "S", try.sent, try.replied, time.Hour, true, nil, released, try.token) // held until released
	close(stop)
	<-done
}
