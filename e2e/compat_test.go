package e2e

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestRedisPyLock runs redis-py's redis.lock.Lock (Debian python3-redis,
// /usr/bin/python3) against the proxy over five real redis-servers.
func TestRedisPyLock(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import redis").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-redis is needed (apt-get install python3-redis; .ci/run does this): %v: %s", err, out)
	}
	// A short lease, so that the lock without timeout is held past several.
	h := harness.New(t, 5, func(c *config.Config) { c.BoundLease = 1500 * time.Millisecond })
	cmd := exec.Command("/usr/bin/python3", "compat/python/redispy_lock.py")
	cmd.Env = append(cmd.Environ(), "REDLOCK_ADDR="+h.Addr, "REDLOCK_BOUND_WAIT=5")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "passed") {
		t.Fatalf("redis-py's Lock against the proxy: %v", err)
	}
}

// TestBsmRedislockV10Client runs bsm/redislock v0.10.0, the real client (its
// own module, compat/go/bsm10: the repository's tests use v0.9.4), against
// the proxy over five real redis-servers: obtain of one key and of several
// (all or none), re-obtain by token, TTL, refresh, release, retry, a race.
func TestBsmRedislockV10Client(t *testing.T) {
	h := harness.New(t, 5, nil)
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = "compat/go/bsm10"
	cmd.Env = append(cmd.Environ(), "REDLOCK_ADDR="+h.Addr, "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "passed") {
		t.Fatalf("bsm/redislock v0.10.0 against the proxy: %v", err)
	}
}

// TestRedsync: redsync v4 with its one pool pointed at the proxy, which does
// the Redlock rounds across five real redis-servers.
func TestRedsync(t *testing.T) {
	h := harness.New(t, 5, nil)
	h.Record("go-redsync-4.18.1", "redsync v4.18.1 over go-redis v9", "compat_test.go TestRedsync: Lock, contention, Valid, Extend, Unlock, ErrLockAlreadyExpired, WithSetNXOnExtend, goroutines contending", 5000)
	c := h.Client(func(o *redis.Options) { o.PoolSize = 20 })
	rs := redsync.New(goredis.NewPool(c))
	ctx := t.Context()

	m := rs.NewMutex("rs:a", redsync.WithExpiry(2*time.Second), redsync.WithTries(1))
	if err := m.LockContext(ctx); err != nil {
		t.Fatalf("Lock = %v", err)
	}
	other := rs.NewMutex("rs:a", redsync.WithExpiry(2*time.Second), redsync.WithTries(1))
	if err := other.LockContext(ctx); err == nil {
		t.Fatal("a second mutex locked a held lock")
	}
	//lint:ignore SA1019 deprecated, but existing redsync users call Valid: it must keep working
	if ok, err := m.ValidContext(ctx); !ok || err != nil {
		t.Fatalf("Valid = %v, %v", ok, err)
	}
	time.Sleep(500 * time.Millisecond)
	if ok, err := m.ExtendContext(ctx); !ok || err != nil {
		t.Fatalf("Extend = %v, %v", ok, err)
	}
	if pttl := c.PTTL(ctx, "rs:a").Val(); pttl < 1900*time.Millisecond {
		t.Fatalf("PTTL after Extend = %v, want about the 2s expiry again", pttl)
	}
	if ok, err := m.UnlockContext(ctx); !ok || err != nil {
		t.Fatalf("Unlock = %v, %v", ok, err)
	}
	if err := other.LockContext(ctx); err != nil {
		t.Fatalf("Lock after the unlock = %v", err)
	}

	short := rs.NewMutex("rs:b", redsync.WithExpiry(300*time.Millisecond), redsync.WithTries(1))
	if err := short.LockContext(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if ok, err := short.UnlockContext(ctx); ok || !errors.Is(err, redsync.ErrLockAlreadyExpired) {
		t.Fatalf("Unlock after expiry = %v, %v; want ErrLockAlreadyExpired", ok, err)
	}

	renew := rs.NewMutex("rs:c", redsync.WithExpiry(300*time.Millisecond), redsync.WithTries(1), redsync.WithSetNXOnExtend())
	if err := renew.LockContext(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if ok, err := renew.ExtendContext(ctx); !ok || err != nil {
		t.Fatalf("Extend with SetNX after expiry = %v, %v; want the lock taken again", ok, err)
	}

	var inside, count atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				mu := rs.NewMutex("rs:counter", redsync.WithExpiry(5*time.Second), redsync.WithTries(500), redsync.WithRetryDelay(5*time.Millisecond))
				if err := mu.LockContext(ctx); err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) > 1 {
					t.Error("two goroutines inside the lock at once")
				}
				time.Sleep(time.Millisecond)
				count.Add(1)
				inside.Add(-1)
				if ok, err := mu.UnlockContext(ctx); !ok || err != nil {
					t.Errorf("Unlock = %v, %v", ok, err)
				}
			}
		})
	}
	wg.Wait()
	if count.Load() != 80 {
		t.Fatalf("%d locked sections, want 80", count.Load())
	}
}

// TestBsmRedislock: bsm/redislock against the proxy.
func TestBsmRedislock(t *testing.T) {
	h := harness.New(t, 5, nil)
	h.Record("go-bsm-redislock-0.9.4", "bsm/redislock v0.9.4 over go-redis v9", "compat_test.go TestBsmRedislock: Obtain, contention, TTL, Refresh, Release, ErrLockNotHeld, Obtain with retry", 5000)
	locker := redislock.New(h.Client())
	ctx := t.Context()

	lock, err := locker.Obtain(ctx, "bsm:a", 2*time.Second, nil)
	if err != nil {
		t.Fatalf("Obtain = %v", err)
	}
	if _, err := locker.Obtain(ctx, "bsm:a", time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
		t.Fatalf("a second Obtain = %v; want ErrNotObtained", err)
	}
	if ttl, err := lock.TTL(ctx); err != nil || ttl <= 1500*time.Millisecond || ttl > 2*time.Second {
		t.Fatalf("TTL = %v, %v", ttl, err)
	}
	if err := lock.Refresh(ctx, 5*time.Second, nil); err != nil {
		t.Fatalf("Refresh = %v", err)
	}
	if ttl, _ := lock.TTL(ctx); ttl <= 4*time.Second {
		t.Fatalf("TTL after Refresh to 5s = %v", ttl)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatalf("Release = %v", err)
	}
	if err := lock.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
		t.Fatalf("a second Release = %v; want ErrLockNotHeld", err)
	}
	if ttl, err := lock.TTL(ctx); ttl != 0 || err != nil {
		t.Fatalf("TTL of a released lock = %v, %v", ttl, err)
	}

	holder, err := locker.Obtain(ctx, "bsm:retry", 500*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waiter, err := locker.Obtain(ctx, "bsm:retry", time.Second, &redislock.Options{
		RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(50*time.Millisecond), 100),
	})
	if err != nil {
		t.Fatalf("Obtain with retry = %v", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("the waiter got the lock after %v, while the holder's 500ms had not run out", el)
	}
	if err := holder.Refresh(ctx, time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
		t.Fatalf("Refresh by the expired holder = %v; want ErrNotObtained", err)
	}
	_ = waiter.Release(ctx)
}

// TestNodeClients runs compat/node's tests (ioredis 5, node-redlock 5) with
// Node's test runner against the proxy over five real redis-servers.
func TestNodeClients(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed for the Node client tests")
	}
	if _, err := os.Stat("compat/node/node_modules/redlock"); err != nil {
		t.Fatal("compat/node has no node_modules: run (cd compat/node && npm ci); .ci/run does this")
	}
	h := harness.New(t, 5, nil)
	_, second := h.Serve() // another replica on the same backends, for wake-ups
	cmd := exec.Command("node", "--test", "compat/node/")
	cmd.Env = append(cmd.Environ(), "REDLOCK_ADDR="+h.Addr, "REDLOCK_ADDR2="+second)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node clients against the proxy: %v", err)
	}
}

// TestRueidis: rueidis (RESP3 only, client-side caching off) against the proxy.
func TestRueidis(t *testing.T) {
	h := harness.New(t, 3, nil)
	h.Record("go-rueidis-1.0.79", "rueidis 1.0.79 (RESP3, DisableCache)", "compat_test.go TestRueidis: HELLO 3 and the CLUSTER fallback, acquire, contention, unlock, GET", 5000)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{h.Addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("rueidis connecting (HELLO 3, CLUSTER SLOTS fallback): %v", err)
	}
	defer c.Close()
	ctx := t.Context()
	if err := c.Do(ctx, c.B().Set().Key("rd:a").Value("tok").Nx().Px(5*time.Second).Build()).Error(); err != nil {
		t.Fatalf("acquire = %v", err)
	}
	if err := c.Do(ctx, c.B().Set().Key("rd:a").Value("other").Nx().Px(5*time.Second).Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("second owner = %v; want nil", err)
	}
	n, err := c.Do(ctx, c.B().Eval().Script(harness.UnlockScript).Numkeys(1).Key("rd:a").Arg("tok").Build()).AsInt64()
	if n != 1 || err != nil {
		t.Fatalf("unlock = %d, %v", n, err)
	}
	if err := c.Do(ctx, c.B().Get().Key("rd:a").Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("GET after unlock = %v", err)
	}
}

// TestRegisteredScripts: scripts the proxy does not know become usable once
// an operator registers their SHA1 with a meaning and argument positions.
// These stand in for in-house scripts of any client (a renewal with the
// lease before the owner; an unlock whose lock key is KEYS[2]; an acquire
// answering 1/0).
func TestRegisteredScripts(t *testing.T) {
	renew := "-- in-house renewal: ARGV[1] lease ms, ARGV[2] owner\n" +
		"if redis.call('get', KEYS[1]) == ARGV[2] then redis.call('pexpire', KEYS[1], ARGV[1]) return 1 end return 0"
	unlock := "-- in-house unlock: KEYS[1] is a journal, KEYS[2] the lock\n" +
		"if redis.call('get', KEYS[2]) == ARGV[1] then redis.call('del', KEYS[2]) return 1 end return 0"
	acquire := "-- in-house acquire\nreturn redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0"
	sha := func(s string) string { return fmt.Sprintf("%x", sha1.Sum([]byte(s))) }

	plain := harness.New(t, 3, nil)
	err := plain.Client().Eval(t.Context(), renew, []string{"j:lock"}, 1000, "tok").Err()
	if err == nil || !strings.Contains(err.Error(), "ERR unknown script "+sha(renew)) || !strings.Contains(err.Error(), "scripts:") {
		t.Fatalf("an unregistered script = %v; want the unknown-script error saying how to register", err)
	}

	h := harness.New(t, 3, func(c *config.Config) {
		c.Scripts = []config.Script{
			{SHA1: sha(renew), Meaning: "extend", Key: 1, Owner: 2, TTL: 1, Granted: "1", NotHeld: "0"},
			{SHA1: sha(unlock), Meaning: "release", Key: 2, Owner: 1},
			{SHA1: sha(acquire), Meaning: "acquire", Granted: "1", Taken: "0"},
		}
	})
	c, ctx := h.Client(), t.Context()
	if n, err := c.Eval(ctx, acquire, []string{"j:lock"}, "tok", 2000).Int(); n != 1 || err != nil {
		t.Fatalf("registered acquire = %d, %v", n, err)
	}
	if n, _ := c.Eval(ctx, acquire, []string{"j:lock"}, "other", 2000).Int(); n != 0 {
		t.Fatalf("registered acquire by a second owner = %d", n)
	}
	if n, err := c.EvalSha(ctx, sha(renew), []string{"j:lock"}, 60000, "tok").Int(); n != 1 || err != nil {
		t.Fatalf("registered renewal by EVALSHA = %d, %v", n, err)
	}
	if pttl := c.PTTL(ctx, "j:lock").Val(); pttl < 59*time.Second {
		t.Fatalf("PTTL after the registered renewal = %v", pttl)
	}
	if n, err := c.Eval(ctx, unlock, []string{"j:journal", "j:lock"}, "wrong").Int(); n != 0 || err != nil {
		t.Fatalf("registered unlock by a non-owner = %d, %v", n, err)
	}
	if n, err := c.Eval(ctx, unlock, []string{"j:journal", "j:lock"}, "tok").Int(); n != 1 || err != nil {
		t.Fatalf("registered unlock = %d, %v", n, err)
	}
	for _, b := range h.Backend {
		if keys := harness.UserKeys(t, b.Client()); len(keys) != 0 {
			t.Fatalf("backend %s holds keys %q: the journal key must never have been touched", b.Addr, keys)
		}
	}
}
