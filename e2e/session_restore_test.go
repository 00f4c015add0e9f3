package e2e

// Session renewals restore the lock where a backend lost it (issue 23 E3):
// only where the key is absent and free, never over another owner.

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestSessionRenewalRestoresALostBackend(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = sessionTick })
	ctx := t.Context()
	const ttl = 3 * time.Second
	held := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	for _, k := range []string{"restored", "kept-other"} {
		if err := held.Do(ctx, "LOCK.ACQUIRE", k, "s", ttl.Milliseconds(), "SESSION").Err(); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(t, "both locks on every backend", func() bool {
		return h.Holders("restored", "s") == 3 && h.Holders("kept-other", "s") == 3
	})
	h.Backend[0].Restart() // empty
	if err := h.Backend[0].Client().Set(context.Background(), "kept-other", "other", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * ttl)
	for h.Holders("restored", "s") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v of renewals the session lock is on %d of 3 backends; want it restored on all", 4*ttl, h.Holders("restored", "s"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, err := h.Backend[0].Client().Get(ctx, "kept-other").Result(); err != nil || v != "other" {
		t.Fatalf("a renewal overwrote another owner's key: %q, %v", v, err)
	}
	if n := h.Holders("kept-other", "s"); n != 2 {
		t.Fatalf("kept-other held on %d backends; want 2", n)
	}
}
