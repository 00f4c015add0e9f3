package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestUnlockLatchDeletedWithoutForceRelease: Redisson 3.24+ deletes its
// unlock latch after each unlock (DEL redisson_unlock_latch:...) and its
// unlock waits for that DEL. It is answered as one Redis answers it (1,
// then 0), in one round, even where force releases are off: deleting a
// latch releases no lock. A lock under a latch's name is still only force
// released (refused here).
func TestUnlockLatchDeletedWithoutForceRelease(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.AllowForceRelease = false
		c.HealthInterval = time.Hour // no health check's script among the counted ones
	})
	c := h.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, latch = "{latched}", "redisson_lock__channel:{latched}", "redisson_unlock_latch:{latched}:r1"
	if err := c.Eval(ctx, lock, []string{name}, 20000, "a:1").Err(); err != redis.Nil {
		t.Fatalf("lock: %v", err)
	}
	if n, err := c.Eval(ctx, unlock, []string{name, ch, latch}, 0, 20000, "a:1", "publish", 10000).Int64(); err != nil || n != 1 {
		t.Fatalf("unlock = %d, %v; want 1", n, err)
	}
	if n := harness.AnyKey(t, h.Backend, latch); !n {
		t.Fatal("the unlock left no latch on any backend")
	}
	// An absent latch first: 0, and the backends learn the script (a first
	// EVALSHA of it answers NOSCRIPT and is sent again as EVAL).
	if n, err := c.Del(ctx, "redisson_unlock_latch:{latched}:r0").Result(); err != nil || n != 0 {
		t.Fatalf("DEL of an absent latch = %d, %v; want 0", n, err)
	}
	before := backendCalls(t, h)
	if n, err := c.Del(ctx, latch).Result(); err != nil || n != 1 {
		t.Fatalf("DEL of the latch = %d, %v; want 1 (one Redis: 1)", n, err)
	}
	if calls := backendCalls(t, h) - before; calls > int64(len(h.Backend)) {
		t.Errorf("DEL of the latch sent %d scripts to %d backends; want one round", calls, len(h.Backend))
	}
	if harness.AnyKey(t, h.Backend, latch) {
		// the backends that had not answered when the DEL did may lag a moment
		harness.Eventually(t, "the latch gone from every backend", func() bool { return !harness.AnyKey(t, h.Backend, latch) })
	}
	if n, err := c.Del(ctx, latch).Result(); err != nil || n != 0 {
		t.Fatalf("DEL of the deleted latch = %d, %v; want 0", n, err)
	}
	// A lock named like a latch: its DEL is a force release, refused here.
	const fake = "redisson_unlock_latch:{latched}:lock"
	if ok, err := c.SetNX(ctx, fake, "v", 20*time.Second).Result(); !ok || err != nil {
		t.Fatalf("SET NX of a lock named like a latch: %v %v", ok, err)
	}
	if err := c.Del(ctx, fake).Err(); err == nil || !strings.Contains(err.Error(), "force") {
		t.Fatalf("DEL of a lock named like a latch = %v; want the force release refused", err)
	}
	if h.Holders(fake, "v") != len(h.Backend) {
		t.Fatal("the lock named like a latch was deleted")
	}
}

// backendCalls sums the script calls (EVAL and EVALSHA) every backend ran.
func backendCalls(t *testing.T, h *harness.Harness) int64 {
	t.Helper()
	var n int64
	for _, b := range h.Backend {
		stats := b.Client().Info(t.Context(), "commandstats").Val()
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if _, rest, ok := strings.Cut(stats, cmd); ok {
				var v int64
				for _, r := range rest {
					if r < '0' || r > '9' {
						break
					}
					v = v*10 + int64(r-'0')
				}
				n += v
			}
		}
	}
	return n
}
