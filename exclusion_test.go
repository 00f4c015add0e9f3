package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// These tests reproduce, with real redis-servers, the ways an outside review
// broke mutual exclusion (issue 10). Each failed on the code before its fix.

// replicaAt is a go-redis client to one proxy replica, closed at cleanup.
func replicaAt(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 20 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// waitBackend waits until the replica behind c reports the backend at addr
// in state (up, down, quarantined, duplicate).
func waitBackend(t *testing.T, c *redis.Client, addr, state string) {
	t.Helper()
	want := "addr=" + addr + ",state=" + state + ","
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := c.Info(context.Background(), "redlock").Result()
		if err == nil && strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %s never reached state %s:\n%s %v", addr, state, info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAllUp waits until the replica sees every backend up and voting.
func waitAllUp(t *testing.T, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := c.Info(context.Background(), "redlock").Result()
		if err == nil && !strings.Contains(info, "state=down") && !strings.Contains(info, "state=quarantined") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backends not all usable:\n%s %v", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// splitKey writes key with a different value on each of the first two
// backends: a read of it cannot decide without the third.
func splitKey(t *testing.T, backends []*redistest.Server, key string) {
	t.Helper()
	for i, b := range backends[:2] {
		if err := b.Client().Set(context.Background(), key, fmt.Sprint("v", i), time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func isNoQuorum(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOQUORUM") }

// Finding 3. Replica P1 sends SET k v NX; backend A says yes, P1's links to
// B and C stall. The same command through replica P2 (a client's retry with
// the same value) wins B and C. P1 answers NOQUORUM and rolls back: that
// rollback must not delete P2's grant on B and C, or a third client takes
// the lock while the retry's owner holds it.
func TestRetryThroughAnotherReplicaSurvivesRollback(t *testing.T) {
	servers := redistest.Start(t, 3)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	var links []*toxiproxy.Proxy
	for i, s := range servers[1:] {
		p := toxiproxy.NewProxy(srv, fmt.Sprint("stall", i), "127.0.0.1:0", s.Addr)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		links = append(links, p)
	}
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine, cfg.HealthInterval = "127.0.0.1:0", false, time.Minute
	cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: links[0].Listen}, {Addr: links[1].Listen}}
	h := &harness{t: t, backend: servers, cfg: cfg}
	_, addr1 := h.serve()
	h.cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: servers[1].Addr}, {Addr: servers[2].Addr}}
	_, addr2 := h.serve()
	p1, p2 := replicaAt(t, addr1), replicaAt(t, addr2)
	ctx := t.Context()
	const key, ttl = "lock:retry", 5 * time.Second
	for _, l := range links {
		js := `{"name":"stall","type":"latency","stream":"upstream","toxicity":1,"attributes":{"latency":500}}`
		if _, err := l.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}

	first := make(chan error, 1)
	t0 := time.Now()
	go func() {
		ok, err := p1.SetNX(ctx, key, "v", ttl).Result()
		if ok {
			err = errors.New("P1 granted although its links to B and C were stalled")
		}
		first <- err
	}()
	time.Sleep(50 * time.Millisecond)
	sent := time.Now()
	if ok, err := p2.SetNX(ctx, key, "v", ttl).Result(); !ok || err != nil {
		t.Fatalf("the retry through P2 = %v, %v; want OK (B and C are free)", ok, err)
	}
	// P1's votes from B and C time out (250 ms); then its links heal, before
	// the stalled commands' 500 ms are up, while it waits for B and C to
	// answer before its rollback.
	time.Sleep(time.Until(t0.Add(400 * time.Millisecond)))
	for _, l := range links {
		l.Toxics.ResetToxics(ctx)
	}
	if err := <-first; !isNoQuorum(err) {
		t.Fatalf("P1's round = %v; want NOQUORUM", err)
	}
	time.Sleep(300 * time.Millisecond)
	if ok, err := p2.SetNX(ctx, key, "z", ttl).Result(); ok || err != nil {
		t.Fatalf("a third client got %v, %v %v after the retry's OK, inside its %v window: P1's rollback removed the retry's lock",
			ok, err, time.Since(sent).Round(time.Millisecond), ttl)
	}
	if n := h.holders(key, "v"); n < 2 {
		t.Fatalf("the retry's value is on %d backends, want at least B and C", n)
	}
}

// Finding 4a. A pipeline [SET NX PX 200, PTTL of another key] with one of
// three backends paused: the SET decides at once, the PTTL waits for the
// paused backend, and the replies go out together, in order. An OK written
// after the SET's window ended would be a lock nobody holds.
func TestPipelinedGrantPastItsWindowIsRevoked(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor, c.HealthInterval = 800*time.Millisecond, 0.9, time.Minute
	})
	splitKey(t, h.backend, "lock:other")
	h.backend[2].Pause()
	t.Cleanup(h.backend[2].Resume)
	c, ctx := h.client(), t.Context()
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
	if n := h.holders("lock:piped", "v"); n != 0 && !ok {
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
	h := newHarness(t, 3, func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor, c.HealthInterval = 600*time.Millisecond, 0.9, time.Minute
	})
	h.backend[2].Pause()
	t.Cleanup(h.backend[2].Resume)
	c, ctx := h.client(), t.Context()
	const ttl = 300 * time.Millisecond
	sent := time.Now()
	cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, "lock:queued", "v", 5*time.Second)
		p.Eval(ctx, extendScript, []string{"lock:queued"}, "v", ttl.Milliseconds())
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
	h := newHarness(t, 3, func(c *config.Config) { c.DriftFactor = 0.2 })
	c, ctx := h.client(), t.Context()
	const ttl = time.Second
	sent := time.Now()
	if ok, err := c.SetNX(ctx, "lock:late", "v", ttl).Result(); !ok || err != nil {
		t.Fatalf("SET = %v, %v", ok, err)
	}
	time.Sleep(time.Until(sent.Add(ttl + 100*time.Millisecond)))
	n, err := c.Eval(ctx, extendScript, []string{"lock:late"}, "v", 10000).Int()
	if err != nil || n != 0 {
		t.Fatalf("extend %v after the window = %d, %v; want 0, as one Redis answers", time.Since(sent).Round(time.Millisecond), n, err)
	}
}

// Finding 1. Redisson's reentrant hold counts under two short minority
// outages: lock, re-enter while C is down, re-enter while B is down, then
// three unlocks must answer 0, 0, 1 as on one Redis, and nobody else may
// take the lock before the third.
func TestRedissonHoldCountsSurviveMinorityOutages(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond })
	c, ctx := h.client(), t.Context()
	lockText, unlockText := redissonScript(t, "redisson_lock.lua"), redissonScript(t, "redisson_unlock.lua")
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
	for _, b := range []*redistest.Server{h.backend[2], h.backend[1]} {
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

// Finding 2. Fencing tokens: ten fenced tryLocks while C is down (tokens 1
// to 10 on A and B); C returns with no counters, B restarts empty and
// leaves quarantine, A pauses. The next token must be larger than 10, or no
// token at all (NOQUORUM), never a smaller one.
func TestFencingTokensNeverGoBack(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) {
		c.Quarantine, c.MaxTTL = true, 2*time.Second
		c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond
	})
	c, ctx := h.client(), t.Context()
	waitAllUp(t, c)
	const tryLockSHA = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45" // RFencedLock.tryLock
	const name, tokenKey, owner, lease = "{fence}", "redisson_lock_token:{fence}", "uuid-o:1", 1500
	tryLock := func() (int64, error) {
		v, err := c.EvalSha(ctx, tryLockSHA, []string{name, tokenKey}, lease, owner).Result()
		if err != nil {
			return 0, err
		}
		r, ok := v.([]any)
		if !ok || len(r) != 2 || r[0] != int64(-1) {
			return 0, fmt.Errorf("not granted: %v", v)
		}
		return r[1].(int64), nil
	}
	a, b, cc := h.backend[0], h.backend[1], h.backend[2]
	cc.Pause()
	waitBackend(t, c, cc.Addr, "down")
	var last int64
	for i := range 10 {
		token, err := tryLock()
		if err != nil || token <= last {
			t.Fatalf("fenced tryLock %d = %d, %v; want a token above %d", i+1, token, err, last)
		}
		last = token
	}
	cc.Resume()
	waitBackend(t, c, cc.Addr, "up")
	b.Restart()
	waitBackend(t, c, b.Addr, "quarantined")
	waitBackend(t, c, b.Addr, "up")
	a.Pause()
	t.Cleanup(a.Resume)
	waitBackend(t, c, a.Addr, "down")
	time.Sleep(lease * time.Millisecond) // the lock itself has expired everywhere
	token, err := tryLock()
	switch {
	case err == nil && token <= last:
		t.Fatalf("token %d after %d: fencing tokens went backwards", token, last)
	case err != nil && !isNoQuorum(err):
		t.Fatalf("tryLock with A down = %v; want a larger token or NOQUORUM", err)
	}
	if v, err := c.Get(ctx, tokenKey).Int64(); err == nil && v < last {
		t.Fatalf("GET %s = %d after token %d", tokenKey, v, last)
	}
	t.Logf("B restarted and left quarantine, then A paused: token %d, %v", token, err)
	last = max(last, token)
	a.Resume()
	waitBackend(t, c, a.Addr, "up")
	// Now B restarts while A is down: only C could give B its counters (or
	// the records that end its quarantine), fewer than a majority of the
	// others, so no token is granted at all, however long it waits.
	a.Pause()
	waitBackend(t, c, a.Addr, "down")
	b.Restart()
	waitBackend(t, c, b.Addr, "quarantined")
	time.Sleep(h.app.engine.QuarantineWindow() + 500*time.Millisecond)
	if token, err := tryLock(); !isNoQuorum(err) {
		t.Fatalf("tryLock with B restarted and A down = %d, %v; want NOQUORUM", token, err)
	}
	a.Resume()
	waitBackend(t, c, a.Addr, "up")
	eventually(t, "a token once A returns and B is repaired", func() bool {
		next, err := tryLock()
		if err == nil && next <= last {
			t.Fatalf("token %d after %d", next, last)
		}
		return err == nil
	})
}

// Finding 5. Replicas with different max_ttl: P1 (3 s) grants PX 2500 on
// exactly A and B; B restarts empty. P2 (max_ttl 1 s) must keep B in
// quarantine as long as P1's longest lock could live, not its own 1 s
// (P2's own clients ask for 900 ms).
func TestQuarantineCoversEveryReplicasLongestLock(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) {
		c.Quarantine, c.MaxTTL = true, 3*time.Second
		c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond
	})
	p1 := h.client()
	h.cfg.MaxTTL = time.Second
	_, addr2 := h.serve()
	p2 := replicaAt(t, addr2)
	waitAllUp(t, p1)
	waitAllUp(t, p2)
	ctx := t.Context()
	const key, ttl = "lock:windows", 2500 * time.Millisecond
	a, b, cc := h.backend[0], h.backend[1], h.backend[2]
	cc.Pause()
	waitBackend(t, p1, cc.Addr, "down")
	sent := time.Now()
	if ok, err := p1.SetNX(ctx, key, "first", ttl).Result(); !ok || err != nil {
		t.Fatalf("P1's SET = %v, %v", ok, err)
	}
	cc.Resume()
	waitBackend(t, p2, cc.Addr, "up")
	if h.holders(key, "first") != 2 || !anyKey(t, []*redistest.Server{a}, key) {
		t.Fatalf("the first lock should be on A and B only")
	}
	b.Restart()
	for time.Since(sent) < ttl-300*time.Millisecond {
		if ok, err := p2.SetNX(ctx, key, "second", 900*time.Millisecond).Result(); ok {
			t.Fatalf("P2 granted %v after P1's grant, inside its %v window: B left quarantine too early (%v)",
				time.Since(sent).Round(time.Millisecond), ttl, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w := p2.Info(ctx, "redlock").Val(); !strings.Contains(w, "quarantine_window_ms:30") {
		t.Fatalf("P2's quarantine window is not P1's max_ttl padded:\n%s", w)
	}
}

// The same server under two addresses would vote twice: a compare-and-extend
// succeeds twice on it. The engine tells them apart by run_id and counts
// the second not at all.
func TestDuplicateBackendNeverVotesTwice(t *testing.T) {
	servers := redistest.Start(t, 2)
	_, port, _ := strings.Cut(servers[0].Addr, ":")
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine = "127.0.0.1:0", false
	cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: "localhost:" + port}, {Addr: servers[1].Addr}}
	h := &harness{t: t, backend: servers, cfg: cfg}
	_, addr := h.serve()
	c, ctx := replicaAt(t, addr), t.Context()
	if err := servers[0].Client().Set(ctx, "lock:dup", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := c.Eval(ctx, extendScript, []string{"lock:dup"}, "v", 20000).Int()
	if n == 1 {
		t.Fatalf("extend of a lock held on one server of two = 1: that server voted twice")
	}
	if err != nil && !strings.Contains(err.Error(), "same server as "+servers[0].Addr) {
		t.Fatalf("extend = %v; want the duplicate named", err)
	}
	waitBackend(t, c, "localhost:"+port, "duplicate")
	if ok, err := c.SetNX(ctx, "lock:fresh", "v", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a lock on both real servers = %v, %v; want OK", ok, err)
	}
}
