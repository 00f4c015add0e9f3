package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Redisson releases between 3.23.5 and 3.52.0 send four lock scripts of
// their own (issue 26), each 3.52's text but for a line or two: RFairLock's
// unlock in 3.24.0-3.30.0 and lock() in 3.32.0-3.44.0, RReadWriteLock's
// unlocks in 3.24.0-3.43.0 (a free lock answers 1, as 3.23's did). Their
// SHA1s and layouts come from each release's source text; sent by EVALSHA,
// as the client sends them once its script cache has them.
const (
	fairUnlock324SHA = "ca303f8587d0942f8a0021f62338626ca4dd0118"
	fairLock332SHA   = "929defe0321e0a4c943b4244951d3a730b6eaabc"
	rwReadUnlock324  = "5947c0fee6ca25ae094ec1b3e7a2559a9273d29f"
	rwWriteUnlock324 = "d29c5559782035515d32e926762830b3304b49be"
	fairLock323SHA   = "762bfafa6be221431a0b668685dd15c926483619"
	rwReadLockSHA    = "95553a6ff11176c18e71344e89d116b06fd6f753"
	rwWriteLockSHA   = "6306ba3bf1f563b284bed52d305fce615c6664d9"
)

// evalshaOf sends a script by its SHA1 through c, answering a nil reply as
// nil.
func evalshaOf(c *redis.Client) func(sha string, keys []string, args ...any) (any, error) {
	return func(sha string, keys []string, args ...any) (any, error) {
		v, err := c.EvalSha(context.Background(), sha, keys, args...).Result()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return v, err
	}
}

// TestRedissonBetweenVersions: each is served by quorum as its family's
// nearest recorded script is: a fair lock taken with 3.23's lock() is
// released by 3.24's unlock; 3.32's lock() grants, refuses another owner
// with a wait, and grants again after 3.52's unlock; 3.24's read and write
// unlocks release what their locks took, and answer 1 for a free lock.
func TestRedissonBetweenVersions(t *testing.T) {
	h := harness.New(t, 5, nil)
	c := h.Client()
	ctx := t.Context()
	evalsha := evalshaOf(c)
	// RFairLock 3.24-3.30: lock() as 3.23's, unlock its own.
	f := &fairClient{c: c, name: "fair:{v324}", owner: "uuid-a:1", waitMS: 5000}
	if v, err := evalsha(fairLock323SHA, f.keys(), 10000, f.owner, f.waitMS, time.Now().UnixMilli()); v != nil || err != nil {
		t.Fatalf("3.24's fair lock() = %v, %v; want nil (held)", v, err)
	}
	latch := redissonName("redisson_unlock_latch", f.name) + ":" + f.owner + "-1"
	if v, err := evalsha(fairUnlock324SHA, append(f.keys(), f.channel(), latch), 0, 10000, f.owner, time.Now().UnixMilli(), "PUBLISH", 10000); v != int64(1) || err != nil {
		t.Fatalf("3.24's fair unlock = %v, %v; want 1", v, err)
	}
	if n, _ := c.Exists(ctx, f.name).Result(); n != 0 {
		t.Fatal("the fair lock is still held after its unlock")
	}
	// RFairLock 3.32-3.44: lock() its own, unlock 3.52's.
	a := &fairClient{c: c, name: "fair:{v332}", owner: "uuid-a:1", waitMS: 5000}
	b := &fairClient{c: c, name: a.name, owner: "uuid-b:1", waitMS: 5000}
	lock332 := func(f *fairClient) (any, error) {
		return evalsha(fairLock332SHA, f.keys(), 10000, f.owner, f.waitMS, time.Now().UnixMilli())
	}
	if v, err := lock332(a); v != nil || err != nil {
		t.Fatalf("3.32's fair lock() = %v, %v; want nil (held)", v, err)
	}
	if v, err := lock332(b); err != nil || v == nil {
		t.Fatalf("3.32's fair lock() by another owner = %v, %v; want the ms to wait", v, err)
	}
	if v, err := a.unlock(t, 10000); v != int64(1) || err != nil {
		t.Fatalf("3.52's fair unlock of 3.32's lock = %v, %v; want 1", v, err)
	}
	if v, err := lock332(b); v != nil || err != nil {
		t.Fatalf("3.32's fair lock() by the queued owner after the unlock = %v, %v; want nil (held)", v, err)
	}
	// RReadWriteLock 3.24-3.43: the acquires as 3.23's and 3.52's, the
	// unlocks their own.
	const name, owner = "rw:{v324}", "uuid-r:1"
	timeouts := "{" + name + "}:" + owner + ":rwlock_timeout"
	ch := "redisson_rwlock:{" + name + "}"
	readUnlock := func(n int) (any, error) {
		latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s-%d", name, owner, n)
		return evalsha(rwReadUnlock324, []string{name, ch, timeouts, "{" + name + "}", latch}, 0, owner, "PUBLISH", 10000)
	}
	writeUnlock := func(n int) (any, error) {
		latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s-w%d", name, owner, n)
		return evalsha(rwWriteUnlock324, []string{name, ch, latch}, 1, 10000, owner+":write", "PUBLISH", 10000)
	}
	if v, err := evalsha(rwReadLockSHA, []string{name, timeouts}, 10000, owner, owner+":write"); v != nil || err != nil {
		t.Fatalf("read lock = %v, %v; want nil (held)", v, err)
	}
	if v, err := readUnlock(1); v != int64(1) || err != nil {
		t.Fatalf("3.24's read unlock = %v, %v; want 1 (released)", v, err)
	}
	if v, err := readUnlock(2); v != int64(1) || err != nil {
		t.Fatalf("3.24's read unlock of a free lock = %v, %v; want 1 (3.52's answers nil)", v, err)
	}
	if v, err := evalsha(rwWriteLockSHA, []string{name}, 10000, owner+":write"); v != nil || err != nil {
		t.Fatalf("write lock = %v, %v; want nil (held)", v, err)
	}
	if v, err := writeUnlock(1); v != int64(1) || err != nil {
		t.Fatalf("3.24's write unlock = %v, %v; want 1 (released)", v, err)
	}
	if n, _ := c.Exists(ctx, name).Result(); n != 0 {
		t.Fatal("the read-write lock is still held after its unlocks")
	}
	if v, err := writeUnlock(2); v != int64(1) || err != nil {
		t.Fatalf("3.24's write unlock of a free lock = %v, %v; want 1 (3.52's answers nil)", v, err)
	}
}
