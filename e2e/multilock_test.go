package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// redissonMultiLease is Redisson 3.52's RedissonMultiLock lease script
// (RedissonExpirable's PEXPIRE of every KEY to ARGV[1] ms, ARGV[2] the
// PEXPIRE option), sent after the lock took its members.
const redissonMultiLease = "3fd750e0b43af99dbd223e5523718f18cded3664"

// RedissonMultiLock with a lease (issue 26): the members, taken with
// RLock's lock script, get the lease by quorum on every backend, as
// PEXPIRE sets it on one Redis. The script names no owner, so where force
// release is off (allow_force_release: false) it never shortens a lock: a
// shorter lease leaves the longer TTL, and another client's lease cannot
// cut a holder's window; PEXPIRE's LT is refused there.
func TestRedissonMultiLockLease(t *testing.T) {
	for _, force := range []bool{true, false} {
		t.Run(map[bool]string{true: "force-release-allowed", false: "force-release-off"}[force], func(t *testing.T) {
			multiLockLease(t, force)
		})
	}
}

func multiLockLease(t *testing.T, force bool) {
	h := harness.New(t, 5, func(c *config.Config) { c.AllowForceRelease = force })
	c := h.Client()
	ctx := t.Context()
	lock := clientScript(t, shaRLock)
	owner := "8f1d2c3b-uuid:1"
	members := []string{"{ml}:a", "{ml}:b"}
	for _, k := range members { // Redisson takes them for twice the wait time: 2 s
		if err := c.Eval(ctx, lock, []string{k}, 2000, owner).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RLock lock of member %s = %v; want nil (taken)", k, err)
		}
	}
	ttls := func() (lo, hi time.Duration) {
		lo = time.Hour
		for _, k := range members {
			for i, b := range h.Backend {
				ms := b.Client().PTTL(ctx, k).Val()
				if ms <= 0 {
					t.Fatalf("backend %d: member %s has PTTL %v", i, k, ms)
				}
				lo, hi = min(lo, ms), max(hi, ms)
			}
		}
		return lo, hi
	}
	lease := func(ms int, opt string) (int64, error) { // as Redisson sends it: one member a call
		n := int64(0)
		for _, k := range members {
			m, err := c.Do(ctx, "evalsha", redissonMultiLease, 1, k, ms, opt).Int64()
			if err != nil {
				return 0, err
			}
			n = max(n, m)
		}
		return n, nil
	}
	if n, err := lease(8000, ""); err != nil || n != 1 {
		t.Fatalf("lease of 8 s = %d, %v; want 1", n, err)
	}
	if lo, _ := ttls(); lo < 7*time.Second {
		t.Errorf("after a lease of 8 s the shortest member TTL on a backend is %v; want about 8 s on every backend", lo)
	}
	if n, err := lease(3000, ""); err != nil || n != 1 {
		t.Fatalf("lease of 3 s = %d, %v; want 1 (the locks are there)", n, err)
	}
	switch lo, hi := ttls(); {
	case force && hi > 3100*time.Millisecond:
		t.Errorf("a lease of 3 s left a member TTL of %v; want it set to 3 s as PEXPIRE does (force release is allowed)", hi)
	case !force && lo < 6*time.Second:
		t.Errorf("a lease of 3 s, which names no owner, cut a member's TTL to %v with force release off; want it never shortened", lo)
	}
	if _, err := lease(500, "LT"); force && err != nil || !force && err == nil {
		t.Errorf("a lease with PEXPIRE's LT (shorten only): %v; want it served only where force release is allowed", err)
	}
	if n, err := c.Do(ctx, "evalsha", redissonMultiLease, 1, "{ml}:none", 5000, "").Int64(); err != nil || n != 0 {
		t.Errorf("lease of an absent lock = %d, %v; want 0", n, err)
	}
	if force {
		return // the LT lease shortened the members to 500 ms
	}
	// A plain SET NX PX lock is not a Redisson lock: left alone.
	if err := c.SetNX(ctx, "{ml}:str", "v", 2*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, "evalsha", redissonMultiLease, 1, "{ml}:str", 60000, "").Int64(); err != nil || n != 0 {
		t.Errorf("lease of a string lock = %d, %v; want 0", n, err)
	}
	// The family is served whole: the members unlock as RLock's do.
	unlock := clientScript(t, shaRUnlock)
	for _, k := range members {
		n, err := c.Eval(ctx, unlock, []string{k, "redisson_lock__channel:" + k, "redisson_unlock_latch:" + k + ":r1"}, 0, 30000, owner, "PUBLISH", 13500).Int()
		if err != nil || n != 1 {
			t.Errorf("unlock of member %s = %d, %v; want 1", k, n, err)
		}
	}
}
