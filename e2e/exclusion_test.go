package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// These tests reproduce, with real redis-servers, the ways an outside review
// broke mutual exclusion (issue 10). Each failed on the code before its fix.

// Finding 4a. A pipeline [SET NX PX 200, PTTL of another key] with one of
// three backends paused: the SET decides at once, the PTTL waits for the
// paused backend, and the replies go out together, in order. An OK written
// after the SET's window ended would be a lock nobody holds.
func TestPipelinedGrantPastItsWindowIsRevoked(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor, c.HealthInterval = 800*time.Millisecond, 0.9, time.Minute
	})
	splitKey(t, h.Backend, "lock:other")
	h.Backend[2].Pause()
	t.Cleanup(h.Backend[2].Resume)
	c, ctx := h.Client(), t.Context()
	const ttl = 200 * time.Millisecond
	sent := time.Now()
	cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, "lock:piped", "v", ttl)
		p.PTTL(ctx, "lock:other")
		return nil
	})
	replied := time.Since(sent)
	ok, err := cmds[0].(*redis.BoolCmd).Result()
	switch {
	case ok && replied >= ttl:
		t.Fatalf("OK arrived %v after the SET was sent: its %v window had ended", replied.Round(time.Millisecond), ttl)
	case ok:
		t.Logf("OK in time (%v): the machine answered the paused backend's PTTL early", replied)
	case !isNoQuorum(err):
		t.Fatalf("late grant answered %v; want NOQUORUM", err)
	}
	if n := h.Holders("lock:piped", "v"); n != 0 && !ok {
		t.Fatalf("a revoked grant left its value on %d backends", n)
	}
	if ok, err := c.SetNX(ctx, "lock:piped", "w", time.Second).Result(); !ok || err != nil {
		t.Fatalf("after the revoked grant another owner gets %v, %v; want OK", ok, err)
	}
}

// Finding 4b. The proxy process itself is paused (SIGSTOP) after a SET was
// decided and before its reply went out; on resume the reply must not say OK.
func TestPausedProxyDoesNotDeliverAnExpiredGrant(t *testing.T) {
	backends := redistest.Start(t, 3)
	cfg := config.Default()
	cfg.Quarantine, cfg.NodeTimeout, cfg.TimeoutFactor, cfg.HealthInterval = false, 600*time.Millisecond, 0.9, time.Minute
	for _, b := range backends {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: b.Addr})
	}
	addr, child := childReplica(t, cfg)
	c := replicaAt(t, addr)
	waitAllUp(t, c)
	splitKey(t, backends, "lock:slow")
	backends[2].Pause()
	t.Cleanup(backends[2].Resume)
	ctx := t.Context()
	const ttl = 300 * time.Millisecond
	type result struct {
		ok      bool
		err     error
		replied time.Duration
	}
	done := make(chan result, 1)
	sent := time.Now()
	go func() {
		cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.SetNX(ctx, "lock:paused", "v", ttl)
			p.PTTL(ctx, "lock:slow") // waits for the paused backend
			return nil
		})
		ok, err := cmds[0].(*redis.BoolCmd).Result()
		done <- result{ok, err, time.Since(sent)}
	}()
	time.Sleep(100 * time.Millisecond) // the SET is decided; its reply waits for the PTTL
	_ = child.Process.Signal(syscall.SIGSTOP)
	time.Sleep(600 * time.Millisecond)
	_ = child.Process.Signal(syscall.SIGCONT)
	r := <-done
	if r.ok && r.replied >= ttl {
		t.Fatalf("OK arrived %v after the SET was sent, past its %v window", r.replied.Round(time.Millisecond), ttl)
	}
	if !r.ok && !isNoQuorum(r.err) {
		t.Fatalf("reply = %v; want NOQUORUM", r.err)
	}
}

// Finding 4c. Time a command waits before its round starts counts against
// its window: an extend queued behind its owner's previous round (whose
// straggler, a paused backend, keeps the owner's slot) must not be granted
// once its window has passed, and must not cut the lock's TTL either.
func TestQueuedExtendMeasuresFromArrival(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor, c.HealthInterval = 600*time.Millisecond, 0.9, time.Minute
	})
	h.Backend[2].Pause()
	t.Cleanup(h.Backend[2].Resume)
	c, ctx := h.Client(), t.Context()
	const ttl = 300 * time.Millisecond
	sent := time.Now()
	cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, "lock:queued", "v", 5*time.Second)
		p.Eval(ctx, harness.ExtendScript, []string{"lock:queued"}, "v", ttl.Milliseconds())
		return nil
	})
	replied := time.Since(sent)
	if ok, err := cmds[0].(*redis.BoolCmd).Result(); !ok || err != nil {
		t.Fatalf("SET = %v, %v", ok, err)
	}
	n, err := cmds[1].(*redis.Cmd).Int()
	if n == 1 && replied >= ttl {
		t.Fatalf("the extend answered 1 %v after it was sent, past its %v window", replied.Round(time.Millisecond), ttl)
	}
	if n != 1 && !isNoQuorum(err) {
		t.Fatalf("late extend = %d, %v; want NOQUORUM", n, err)
	}
	if n != 1 {
		if left, err := c.PTTL(ctx, "lock:queued").Result(); err != nil || left < 2*time.Second {
			t.Fatalf("the refused extend cut the lock's TTL to %v (%v); it must be left as it was", left, err)
		}
	}
}

// An extend after the holder's window ended: on one Redis the key is gone
// and PEXPIRE answers 0; on the backends the padded key lives a little
// longer, which must not let the extend succeed.
func TestExtendAfterTheWindowIsRefused(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.DriftFactor = 0.2 })
	c, ctx := h.Client(), t.Context()
	const ttl = time.Second
	sent := time.Now()
	if ok, err := c.SetNX(ctx, "lock:late", "v", ttl).Result(); !ok || err != nil {
		t.Fatalf("SET = %v, %v", ok, err)
	}
	time.Sleep(time.Until(sent.Add(ttl + 100*time.Millisecond)))
	n, err := c.Eval(ctx, harness.ExtendScript, []string{"lock:late"}, "v", 10000).Int()
	if err != nil || n != 0 {
		t.Fatalf("extend %v after the window = %d, %v; want 0, as one Redis answers", time.Since(sent).Round(time.Millisecond), n, err)
	}
}

// Finding 1. Redisson's reentrant hold counts under two short minority
// outages: lock, re-enter while C is down, re-enter while B is down, then
// three unlocks must answer 0, 0, 1 as on one Redis, and nobody else may
// take the lock before the third.
func TestRedissonHoldCountsSurviveMinorityOutages(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond })
	c, ctx := h.Client(), t.Context()
	lockText, unlockText := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, lease = "{counts}", "redisson_lock__channel:{counts}", 30000
	const o, p = "uuid-o:1", "uuid-p:1"
	lock := func(owner string) (any, error) {
		return c.Eval(ctx, lockText, []string{name}, lease, owner).Result()
	}
	unlock := func(n int) (any, error) {
		latch := fmt.Sprintf("redisson_unlock_latch:{counts}:%d", n)
		return c.Eval(ctx, unlockText, []string{name, ch, latch}, 0, lease, o, "publish", 10000).Result()
	}
	mustLock := func(what string) {
		t.Helper()
		if v, err := lock(o); err != redis.Nil {
			t.Fatalf("%s = %v, %v; want nil (held)", what, v, err)
		}
	}
	mustLock("O locks")
	for _, b := range []*redistest.Server{h.Backend[2], h.Backend[1]} {
		b.Pause()
		waitBackend(t, c, b.Addr, "down")
		mustLock("O re-enters while " + b.Addr + " is down")
		b.Resume()
		waitBackend(t, c, b.Addr, "up")
	}
	for i, want := range []int64{0, 0} {
		v, err := unlock(i + 1)
		if n, _ := v.(int64); err != nil || n != want {
			t.Fatalf("unlock %d of 3 = %v, %v; want %d (O took the lock three times)", i+1, v, err, want)
		}
	}
	if v, err := lock(p); err == redis.Nil {
		t.Fatalf("P locked while O still holds once: two owners")
	} else if _, isTTL := v.(int64); !isTTL {
		t.Fatalf("P's lock = %v, %v; want O's PTTL", v, err)
	}
	if v, err := unlock(3); err != nil || v != int64(1) {
		t.Fatalf("the third unlock = %v, %v; want 1 (released)", v, err)
	}
	if v, err := lock(p); err != redis.Nil {
		t.Fatalf("P's lock after O released = %v, %v; want nil (held)", v, err)
	}
}
