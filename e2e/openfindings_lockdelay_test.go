//go:build openfindings

package e2e

// Open finding (helper-77, go test -tags openfindings -run TestRedissonLockKeepsLockDelay ./e2e;
// failed 3 of 3 on a67a274): README said, Lock-delay: "`lock_delay` ... does the same for
// locks taken with `SET NX PX` and the client libraries' scripts" (config:
// "a SET NX PX (or lock script) lock that expired unreleased stays
// unavailable this long"). A Redisson RLock (the client library's acquire
// script, a hash lock) that expired unreleased is free at once: another
// owner's SET NX PX is granted right after its lease, inside lock_delay.

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestRedissonLockKeepsLockDelay(t *testing.T) {
	const lockDelay = 3 * time.Second
	h := harness.New(t, 3, func(c *config.Config) { c.LockDelay = lockDelay; c.NativeLockDelay = 0 })
	r := h.Client()
	ctx := t.Context()
	const key = "{lockdelay:redisson}"
	if res, err := r.Eval(ctx, redissonScript(t, "redisson_lock_3.12.lua"), []string{key}, 500, "uuid-a:1").Result(); err != redis.Nil {
		t.Fatalf("Redisson lock = %v, %v; want nil (granted)", res, err)
	}
	time.Sleep(900 * time.Millisecond) // expired unreleased; lock_delay runs 3 s more
	if ok, err := r.SetNX(ctx, key, "plain-b", time.Second).Result(); err == nil && ok {
		t.Fatalf("SET NX PX granted ~0.4 s after a Redisson lock expired unreleased, inside lock_delay %v", lockDelay)
	}
	if res, err := r.Eval(ctx, redissonScript(t, "redisson_lock_3.12.lua"), []string{key}, 30000, "uuid-c:1").Result(); err == redis.Nil {
		t.Fatalf("Redisson lock by uuid-c:1 granted ~0.4 s after uuid-a:1's lock expired unreleased, inside lock_delay %v (%v)", lockDelay, res)
	}
}
