package e2e

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Issue 23 B and D: bootstrapping and total wipes.

// bootstrapped starts n fresh redis-servers, runs `redlock-proxy bootstrap`
// on them (which must succeed) and then one replica, with quarantine on
// and the configuration mutate gives.
func bootstrapped(t *testing.T, n int, mutate func(*config.Config)) *harness.Harness {
	t.Helper()
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine = "127.0.0.1:0", true
	backends := redistest.Start(t, n)
	for _, addr := range redistest.Addrs(backends) {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: addr})
	}
	if mutate != nil {
		mutate(&cfg)
	}
	if err := app.BootstrapConfig(cfg, io.Discard); err != nil {
		t.Fatalf("bootstrap of fresh backends: %v", err)
	}
	h := harness.Of(t, backends, cfg)
	h.App, h.Addr = h.Serve()
	return h
}

// shortWindow is a quarantine window of about maxTTL, checked often.
func shortWindow(maxTTL time.Duration) func(*config.Config) {
	return func(c *config.Config) {
		c.MaxTTL, c.HealthInterval, c.NativeLockDelay = maxTTL, 100*time.Millisecond, 0
	}
}

// neverGranted tries key for owner through every client for a while and
// fails the test on any grant.
func neverGranted(t *testing.T, key, owner string, ttl, d time.Duration, clients ...*redis.Client) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for i, c := range clients {
			if ok, _ := c.SetNX(t.Context(), key, owner, ttl).Result(); ok {
				t.Fatalf("%s won %s through replica %d while its holder's window is open: two owners", owner, key, i)
			}
		}
	}
}

// recordedEverywhere waits until a replica's max-TTL record is on every
// backend: a running replica has seen each since it (re)started.
func recordedEverywhere(t *testing.T, h *harness.Harness) {
	t.Helper()
	harness.Eventually(t, "a replica's record on every backend", func() bool {
		for _, b := range h.Backend {
			if n, _ := b.Client().Exists(t.Context(), quorum.MaxTTLKey).Result(); n == 0 {
				return false
			}
		}
		return true
	})
}

// B1: a backend restarts empty under X's lock and replica A quarantines it.
// Before: a second replica started with initial_cluster_state: new marked
// it as new (the other four were marked already), A ended its quarantine
// on seeing that marker, and Y won X's lock. Now bootstrap refuses a
// marked deployment, and no marker, whoever wrote it, ends a quarantine a
// replica started: only its own clock does.
func TestBootstrapNeverEndsAnotherReplicasQuarantine(t *testing.T) {
	h := bootstrapped(t, 5, shortWindow(20*time.Second))
	a, ctx := h.Client(), t.Context()
	if ok, err := a.SetNX(ctx, "lock:b1", "X", 15*time.Second).Result(); !ok || err != nil {
		t.Fatalf("X's acquire = %v, %v", ok, err)
	}
	harness.Eventually(t, "X's lock on all five", func() bool { return h.Holders("lock:b1", "X") == 5 })
	for _, b := range h.Backend[3:] {
		b.Client().Del(ctx, "lock:b1", quorum.MetaKey("lock:b1")) // X holds backends 0, 1, 2 only
	}
	h.Backend[0].Restart()
	waitBackend(t, a, h.Backend[0].Addr, "quarantined")
	_, addr := h.Serve() // replica B: backend 0 unmarked among marked ones
	b := replicaAt(t, addr)
	waitBackend(t, b, h.Backend[0].Addr, "quarantined")
	if err := app.BootstrapConfig(h.Cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "never bootstrapped again") {
		t.Fatalf("bootstrap of a marked deployment = %v; want refused", err)
	}
	// A marker for backend 0's current run appears (from anywhere): neither
	// replica may end the quarantine it started for it.
	runID := runIDOf(t, h.Backend[0])
	if err := h.Backend[0].Client().Set(ctx, quorum.IntactKey, runID, 0).Err(); err != nil {
		t.Fatal(err)
	}
	neverGranted(t, "lock:b1", "Y", 10*time.Second, 3*time.Second, a, b)
}

// runIDOf reads a backend's run_id.
func runIDOf(t *testing.T, s *redistest.Server) string {
	t.Helper()
	info, err := s.Client().Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "run_id:")
	return strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])
}

// B2: every backend restarts empty while X holds its lock (a power loss);
// the running replica quarantines them all. Before: a replica (re)started
// with initial_cluster_state: new marked them as a new deployment and both
// replicas granted X's lock. Now bootstrap refuses backends a running
// replica has seen, and a replica started after counts none of them.
func TestBootstrapRefusesAfterATotalRestart(t *testing.T) {
	sleepBound(t)
	h := bootstrapped(t, 5, shortWindow(20*time.Second))
	a, ctx := h.Client(), t.Context()
	if ok, err := a.SetNX(ctx, "lock:b2", "X", 15*time.Second).Result(); !ok || err != nil {
		t.Fatalf("X's acquire = %v, %v", ok, err)
	}
	for _, b := range h.Backend {
		b.Restart()
	}
	for _, b := range h.Backend {
		waitBackend(t, a, b.Addr, "quarantined")
	}
	recordedEverywhere(t, h)
	err := app.BootstrapConfig(h.Cfg, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "a replica has already seen it") {
		t.Fatalf("bootstrap after a total restart = %v; want refused", err)
	}
	_, addr := h.Serve() // replica B, (re)started
	neverGranted(t, "lock:b2", "Y", 10*time.Second, 3*time.Second, a, replicaAt(t, addr))
}

// D: after a total wipe and the quarantine window, fencing tokens went
// back (1, 2, 3 again; with no flag at all). They must stay above every
// token given before.
func TestTokensIncreaseAcrossATotalWipe(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.Quarantine = true
		shortWindow(time.Second)(c)
	})
	c := h.Client()
	var before, fencedBefore int64
	for i := range 4 {
		before = acquireToken(t, c, "lock:d"+string(rune('a'+i)))
		fencedBefore = fencedToken(t, c, fmt.Sprint("u", i, ":1"))
	}
	for _, b := range h.Backend {
		b.Restart()
	}
	after := acquireToken(t, c, "lock:d-after")
	if after <= before {
		t.Fatalf("token after a total wipe = %d, before = %d: tokens went back", after, before)
	}
	// Redisson's RFencedLock too (its counter started again at 1 before
	// quorum.LockCounterKey; seen failing on dade69e).
	if fenced := fencedToken(t, c, "v:1"); fenced <= fencedBefore {
		t.Fatalf("RFencedLock token after a total wipe = %d, before = %d: tokens went back", fenced, fencedBefore)
	}
}

// fencedToken takes Redisson RFencedLock {dw} for owner with tryLock (100
// ms lease), polling as acquireToken does, and returns its token.
func fencedToken(t *testing.T, c *redis.Client, owner string) int64 {
	t.Helper()
	var (
		v   any
		err error
	)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v, err = c.EvalSha(t.Context(), shaRFencedTry, []string{"{dw}", "redisson_lock_token:{dw}"}, 100, owner).Result()
		if pair, ok := v.([]any); ok && err == nil && len(pair) == 2 && pair[0] == int64(-1) {
			return pair[1].(int64)
		}
	}
	t.Fatalf("fenced tryLock {dw} for 30s: %v, %v", v, err)
	return 0
}

// acquireToken takes key with LOCK.ACQUIRE (100 ms), polling for up to 30s
// while the backends are quarantined, and returns its token.
func acquireToken(t *testing.T, c *redis.Client, key string) int64 {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var tok int64
		if tok, err = c.Do(t.Context(), "LOCK.ACQUIRE", key, "owner", 100).Int64(); err == nil {
			return tok
		}
	}
	t.Fatalf("LOCK.ACQUIRE %s for 30s: %v", key, err)
	return 0
}
