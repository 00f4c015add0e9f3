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

// RSpinLock 3.52's unlock through the proxy keeps Redisson's semantics as
// its script has them on one Redis: re-entry counts, a retried unlock
// (same latch) answering as before without giving up a second hold, nil
// for an owner that does not hold it; 3.23's the same without the latch.
func TestRSpinLockReentryAndLatch(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	ctx := t.Context()
	const lock, unlock52, unlock23 = "dad0f8d619e548e04f21fb48d50be5034df3adae",
		"73ac2729af29ea9a975f95e8097f7ee9a74cce3d", "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946"
	const key, a, b = "{spinr}", "uuid-a:1", "uuid-b:9"
	reply := func(what string, args ...any) any {
		v, err := c.Do(ctx, args...).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	unlock := func(req, owner string) any {
		return reply("unlock "+req, "evalsha", unlock52, 2, key, "redisson_unlock_latch:"+key+":"+req, 30000, owner, 13500)
	}
	for i := range 2 {
		if v := reply("lock", "evalsha", lock, 1, key, 30000, a); v != nil {
			t.Fatalf("lock #%d by its owner = %v; want nil (held)", i+1, v)
		}
	}
	if v, ok := reply("lock by b", "evalsha", lock, 1, key, 30000, b).(int64); !ok || v <= 0 || v > 30000 {
		t.Errorf("lock by another owner = %v; want the holder's PTTL", v)
	}
	for _, step := range []struct {
		req, owner string
		want       any
	}{
		{"r1", a, int64(0)}, {"r1", a, int64(0)}, // one hold given up; the retry gives up none
		{"r3", b, nil},                           // not the owner
		{"r2", a, int64(1)}, {"r2", a, int64(1)}, // released; the retry answers the same
	} {
		if v := unlock(step.req, step.owner); v != step.want {
			t.Errorf("unlock %s by %s = %v; want %v", step.req, step.owner, v, step.want)
		}
	}
	if v := reply("lock by b after", "evalsha", lock, 1, key, 30000, b); v != nil {
		t.Errorf("lock by b after the release = %v; want nil (granted)", v)
	}
	// 3.23: no latch; b's two holds, then nil once released.
	if v := reply("re-lock b", "evalsha", lock, 1, key, 30000, b); v != nil {
		t.Fatalf("re-lock by b = %v", v)
	}
	for _, want := range []any{int64(0), int64(1), nil} {
		if v := reply("unlock 3.23", "evalsha", unlock23, 1, key, 30000, b); v != want {
			t.Errorf("3.23 unlock by b = %v; want %v", v, want)
		}
	}
}
