package e2e

// Mutual exclusion and fencing across backend restarts and duplicates.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// Finding 2. Fencing tokens: ten fenced tryLocks while C is down (tokens 1
// to 10 on A and B); C returns with no counters, B restarts empty and
// leaves quarantine, A pauses. The next token must be larger than 10, or no
// token at all (NOQUORUM), never a smaller one.
func TestFencingTokensNeverGoBack(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.Quarantine, c.MaxTTL = true, 2*time.Second
		c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond
	})
	c, ctx := h.Client(), t.Context()
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
	a, b, cc := h.Backend[0], h.Backend[1], h.Backend[2]
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
	time.Sleep(h.App.Engine.QuarantineWindow() + 500*time.Millisecond)
	if token, err := tryLock(); !isNoQuorum(err) {
		t.Fatalf("tryLock with B restarted and A down = %d, %v; want NOQUORUM", token, err)
	}
	a.Resume()
	waitBackend(t, c, a.Addr, "up")
	harness.Eventually(t, "a token once A returns and B is repaired", func() bool {
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
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.Quarantine, c.MaxTTL = true, 3*time.Second
		c.HealthInterval, c.NodeTimeout = 100*time.Millisecond, 200*time.Millisecond
	})
	p1 := h.Client()
	h.Cfg.MaxTTL = time.Second
	_, addr2 := h.Serve()
	p2 := replicaAt(t, addr2)
	waitAllUp(t, p1)
	waitAllUp(t, p2)
	ctx := t.Context()
	const key, ttl = "lock:windows", 2500 * time.Millisecond
	a, b, cc := h.Backend[0], h.Backend[1], h.Backend[2]
	cc.Pause()
	waitBackend(t, p1, cc.Addr, "down")
	sent := time.Now()
	if ok, err := p1.SetNX(ctx, key, "first", ttl).Result(); !ok || err != nil {
		t.Fatalf("P1's SET = %v, %v", ok, err)
	}
	cc.Resume()
	waitBackend(t, p2, cc.Addr, "up")
	if h.Holders(key, "first") != 2 || !harness.AnyKey(t, []*redistest.Server{a}, key) {
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
	// P1's max_ttl padded (3033 ms) and the native lock-delay (5 s): a
	// backend that lost a lock's delay note must not vote it free early.
	if w := p2.Info(ctx, "redlock").Val(); !strings.Contains(w, "quarantine_window_ms:8033") {
		t.Fatalf("P2's quarantine window is not P1's max_ttl padded plus the lock-delay:\n%s", w)
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
	h := harness.Of(t, servers, cfg)
	_, addr := h.Serve()
	c, ctx := replicaAt(t, addr), t.Context()
	if err := servers[0].Client().Set(ctx, "lock:dup", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := c.Eval(ctx, harness.ExtendScript, []string{"lock:dup"}, "v", 20000).Int()
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
