package e2e

// A queued WAIT waiter is not overtaken (issue 23 E1): while a key has live
// waiters, a plain SET NX PX is refused as if the lock were held.

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestPlainAcquireDoesNotOvertakeAWaiter(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.NativeLockDelay = 0 })
	ctx := t.Context()
	holder := h.Client()
	// A plain lock: its plain release wakes nobody, so the key is free
	// while the waiter sleeps until the holder's TTL would have ended.
	const held = 4 * time.Second
	if err := holder.SetNX(ctx, "q", "holder", held).Err(); err != nil {
		t.Fatal(err)
	}
	waiter := h.Client(func(o *redis.Options) { o.PoolSize = 1; o.ReadTimeout = 30 * time.Second })
	granted := make(chan error, 1)
	go func() { granted <- waiter.Do(ctx, "LOCK.ACQUIRE", "q", "waiter", 60000, "WAIT", 20000).Err() }()
	harness.Eventually(t, "the waiter queued on a quorum", func() bool { return queuedOn(t, h, "q", "waiter") >= 2 })
	if n, err := holder.Eval(ctx, harness.UnlockScript, []string{"q"}, "holder").Int(); err != nil || n != 1 {
		t.Fatalf("release: %d, %v", n, err)
	}
	other := h.Client()
	for i := range 10 {
		took, err := other.SetNX(ctx, "q", "overtaker", 30*time.Second).Result()
		if err != nil {
			t.Fatalf("SET NX PX #%d: %v; want nil (taken)", i, err)
		}
		if took {
			t.Fatalf("SET NX PX #%d took the key while a waiter was queued (on %d backends)", i, queuedOn(t, h, "q", "waiter"))
		}
	}
	select {
	case err := <-granted:
		if err != nil {
			t.Fatalf("the waiter: %v", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("the waiter was not granted")
	}
	if n := h.Holders("q", "waiter"); n < 2 {
		t.Fatalf("the waiter holds the lock on %d backends", n)
	}
}
