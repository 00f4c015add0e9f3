package e2e

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// review112: a Redisson RFencedLock's token counter is KEYS[2], named by
// the client. Named "redisson_unlock_latch:...", it is a string with no
// lock's note beside it, so DEL of it is served by DeleteLatch: deleted on
// every backend although allow_force_release is false (before 7d8a8b5: the
// DEL was a force release, refused), and the next fenced grant answers a
// token below the ones already given. Since the counter moved into the
// proxy's names (quorum.LockCounterKey), no key of that name exists: the
// DEL answers 0, as one Redis answers for a key it lacks, and the tokens
// keep rising.
func TestReview112FencedCounterNamedLikeLatch(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.AllowForceRelease = false })
	c := h.Client()
	ctx := t.Context()
	const tryLockSHA = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"
	unlockText := clientScript(t, shaRUnlock)
	const name, counter, ch = "{F}", "redisson_unlock_latch:{F}:tok", "redisson_lock__channel:{F}"
	var last int64
	cycle := func(i int) int64 {
		owner := fmt.Sprint("u:", i)
		v, err := c.EvalSha(ctx, tryLockSHA, []string{name, counter}, 10000, owner).Result()
		r, _ := v.([]any)
		if err != nil || len(r) != 2 || r[0] != int64(-1) {
			t.Fatalf("fenced tryLock %d = %v, %v", i, v, err)
		}
		tok := r[1].(int64)
		latch := fmt.Sprint("redisson_unlock_latch:{F}:", i)
		if err := c.Eval(ctx, unlockText, []string{name, ch, latch}, 0, 10000, owner, "publish", 1000).Err(); err != nil {
			t.Fatalf("unlock %d: %v", i, err)
		}
		_ = c.Del(ctx, latch).Err() // Redisson's; refused before 7d8a8b5 here (not this test's point)
		return tok
	}
	for i := 1; i <= 3; i++ {
		tok := cycle(i)
		if tok <= last {
			t.Fatalf("token %d after %d (before the DEL)", tok, last)
		}
		last = tok
	}
	n, err := c.Del(ctx, counter).Result()
	t.Logf("DEL of the counter (allow_force_release: false) = %d, %v", n, err)
	gone := !harness.AnyKey(t, h.Backend, counter)
	tok := cycle(4)
	t.Logf("token after the DEL: %d (last before: %d); counter gone from every backend after DEL: %v", tok, last, gone)
	if err != nil || n != 0 {
		t.Errorf("DEL of a fencing counter named like a latch = %d, %v; want 0 (no key of that name)", n, err)
	}
	if tok <= last {
		t.Errorf("fencing token %d after %d: the counter was deleted through the latch path", tok, last)
	}
}

// review112: in a database other than 0, a key reaches cmdDel mapped
// ("__redlock:db1:redisson_unlock_latch:..."), so the latch prefix never
// matches: Redisson's DEL of its latch is a force release there, refused
// with allow_force_release: false, as before 7d8a8b5 (the CHANGELOG says
// the latch DEL is now served with force releases off).
func TestReview112LatchDelInDatabase1(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.AllowForceRelease = false })
	c := h.Client(func(o *redis.Options) { o.DB = 1 })
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, latch = "{db1}", "redisson_lock__channel:{db1}", "redisson_unlock_latch:{db1}:r1"
	if err := c.Eval(ctx, lock, []string{name}, 20000, "a:1").Err(); err != redis.Nil {
		t.Fatalf("lock: %v", err)
	}
	if n, err := c.Eval(ctx, unlock, []string{name, ch, latch}, 0, 20000, "a:1", "publish", 10000).Int64(); err != nil || n != 1 {
		t.Fatalf("unlock = %d, %v; want 1", n, err)
	}
	if n, err := c.Del(ctx, latch).Result(); err != nil || n != 1 {
		t.Fatalf("DEL of the latch in database 1 = %d, %v; want 1 as in database 0", n, err)
	}
}

// review112: a semaphore (RPermitExpirableSemaphore) named like a latch
// lives under __redlock:sem:<name>; DeleteLatch finds no key <name> and
// answers 0, leaving it (force releases allowed). One Redis, and the proxy
// before 7d8a8b5, delete it and answer 1.
func TestReview112SemaphoreNamedLikeLatch(t *testing.T) {
	h := harness.New(t, 3, nil)
	s := &r98Sem{t: t, c: h.Client(), name: "redisson_unlock_latch:sem"}
	s.mustTrySet(3)
	n, err := s.c.Del(t.Context(), s.name).Result()
	v, verr := s.eval(t.Context(), r98Total, []string{s.name, s.timeouts(), s.channel()}, 0, "PUBLISH")
	t.Logf("DEL = %d, %v; getPermits after = %v, %v", n, err, v, verr)
	if err != nil || n != 1 || v != int64(0) {
		t.Fatalf("DEL of a semaphore named like a latch = %d, %v, permits after %v; want 1 and the semaphore gone", n, err, v)
	}
}
