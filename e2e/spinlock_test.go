package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Redisson's RSpinLock (3.23 and 3.52) locks with the very text of RLock
// 3.12.3-3.18's lock script (dad0f8d6...), so the proxy cannot tell them
// apart at acquire: it may grant that acquire only if it also serves
// RSpinLock's unlock (3.23 5b9e58d1..., 3.52 73ac2729...) and forceUnlock
// (51b433c3...). Never a lock the caller cannot release (issue 26).
func TestRSpinLockNeverHalfServed(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.AllowForceRelease = true })
	c := h.Client()
	ctx := t.Context()
	const lock = "dad0f8d619e548e04f21fb48d50be5034df3adae"
	owner := "6f0a1b2c-uuid:1"
	for _, tc := range []struct {
		version, unlock string
		keys            []any
		argv            []any
	}{
		{"3.23", "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946", []any{"{spin23}"}, []any{30000, owner}},
		{"3.52", "73ac2729af29ea9a975f95e8097f7ee9a74cce3d",
			[]any{"{spin52}", "redisson_unlock_latch:{spin52}:req1"}, []any{30000, owner, 13500}},
	} {
		key := tc.keys[0]
		err := c.Do(ctx, "evalsha", lock, 1, key, 30000, owner).Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			if !strings.Contains(err.Error(), "RSpinLock") {
				t.Errorf("%s: acquire refused without naming RSpinLock: %v", tc.version, err)
			}
			continue // refused at acquire: never half-served
		}
		// Granted: then its unlock must release it, answering 1 as on one Redis.
		args := append(append([]any{"evalsha", tc.unlock, len(tc.keys)}, tc.keys...), tc.argv...)
		n, err := c.Do(ctx, args...).Int()
		if err != nil || n != 1 {
			t.Errorf("RSpinLock %s: lock() granted, unlock() = %d, %v; want 1 (released)", tc.version, n, err)
		}
		if err := c.Do(ctx, "evalsha", lock, 1, key, 30000, "other:2").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("RSpinLock %s: after unlock another owner's lock() = %v; want granted (nil)", tc.version, err)
		}
		// And forceUnlock releases whoever holds it: 1, then 0.
		for _, want := range []int{1, 0} {
			n, err := c.Do(ctx, "evalsha", "51b433c3cc9a6ca991b3aefec63d23490c246318", 1, key).Int()
			if err != nil || n != want {
				t.Errorf("RSpinLock %s: forceUnlock = %d, %v; want %d", tc.version, n, err, want)
			}
		}
	}
}
