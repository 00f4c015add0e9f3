package e2e

// Adversarial review of 5a89da5 (cheaper hash lock scripts): each test here
// fails on 5a89da5 and passes on its parent e61a279.

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestHashPerfRWLockOnAStringLockIsTaken: a Redisson RReadWriteLock whose
// name is held by a string lock (SET NX PX through the proxy) is taken: the
// read and write acquire scripts answer the lock's TTL (Redisson waits and
// retries), and the read and write unlock scripts answer that this thread
// does not hold it. On 5a89da5 rwMode(key, owner) reads the hash with a
// plain HMGET (redis.call), which raises WRONGTYPE on every backend where
// e61a279's rwMode (pcall HGET) found "no read-write lock" and answered
// taken / not held: the client gets an error reply instead.
func TestHashPerfRWLockOnAStringLockIsTaken(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	c := h.Client()
	ctx := t.Context()
	const name = "rwperf:{string}"
	if ok, err := c.SetNX(ctx, name, "string-owner", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("SET NX of the free name = %v, %v", ok, err)
	}
	r := &rwClient{c: c, s: loadRWScripts(t), name: name, owner: "uuid-r:1"}
	for _, write := range []bool{false, true} {
		what := map[bool]string{false: "read", true: "write"}[write]
		var res any
		var err error
		if write {
			res, err = c.Eval(ctx, r.s.write, []string{name}, 20000, r.owner+":write").Result()
		} else {
			res, err = c.Eval(ctx, r.s.read, []string{name, "{" + name + "}:" + r.owner + ":rwlock_timeout"}, 20000, r.owner, r.owner+":write").Result()
		}
		if err != nil {
			t.Errorf("%s acquire of a name a string lock holds = %v, %v; want the holder's TTL (taken), as e61a279 answers", what, res, err)
		} else if ttl, ok := res.(int64); !ok || ttl <= 0 {
			t.Errorf("%s acquire of a name a string lock holds = %v; want the holder's TTL", what, res)
		}
		if res, err := r.unlock(t, write, 30000); err != nil && err != redis.Nil {
			t.Errorf("%s unlock of a name a string lock holds = %v, %v; want not held (nil), as e61a279 answers", what, res, err)
		}
	}
	if v, err := c.Get(ctx, name).Result(); err != nil || v != "string-owner" {
		t.Errorf("the string lock after the read-write lock's calls = %q, %v", v, err)
	}
}
