package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Issue 13: five freshly started redis-servers answered NOQUORUM
// "quarantined: restarted recently" for ten minutes, with no remedy named.

// After `redlock-proxy bootstrap`, fresh backends are marked and locks work
// at once, safely: a replica started later counts them too (each carries
// its current run's marker).
func TestNewDeploymentLocksAtOnce(t *testing.T) {
	h := bootstrapped(t, 5, nil)
	c, ctx := h.Client(), t.Context()
	if ok, err := c.SetNX(ctx, "lock:first", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("first lock on a new deployment = %v, %v; want OK at once", ok, err)
	}
	_, addr := h.Serve()
	if ok, err := replicaAt(t, addr).SetNX(ctx, "lock:second", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a later replica on the marked backends = %v, %v; want OK", ok, err)
	}
}

// Bootstrap is for backends no replica has seen: once one runs (its max-TTL
// record is on them), bootstrap refuses and marks nothing, and the running
// replica keeps the quarantine it started until its own clock ends it. (It
// used to end it on seeing the marker another replica's flag wrote: issue
// 23 B1.)
func TestBootstrapRefusesBackendsAReplicaHasSeen(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) { c.Quarantine = true })
	early := h.Client()
	if err := early.SetNX(t.Context(), "lock:early", "tok", 30*time.Second).Err(); err == nil || !strings.Contains(err.Error(), "quarantined") {
		t.Fatalf("fresh backends, no bootstrap: %v; want quarantined", err)
	}
	recordedEverywhere(t, h)
	err := app.BootstrapConfig(h.Cfg, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "a replica has already seen it") {
		t.Fatalf("bootstrap beside a running replica = %v; want refused", err)
	}
	for _, b := range h.Backend {
		if n, _ := b.Client().Exists(t.Context(), quorum.IntactKey).Result(); n != 0 {
			t.Fatalf("a refused bootstrap marked %s", b.Addr)
		}
	}
	if err := early.SetNX(t.Context(), "lock:early", "tok", 30*time.Second).Err(); err == nil || !strings.Contains(err.Error(), "quarantined") {
		t.Fatalf("after the refused bootstrap: %v; want still quarantined", err)
	}
}

// Without it, fresh backends wait out the quarantine, and the reply says
// for how long, why, and what to do.
func TestFreshBackendsSayWhyAndHowLong(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.Quarantine = true })
	_, err := h.Client().SetNX(t.Context(), "lock:q", "tok", 30*time.Second).Result()
	for _, want := range []string{"NOQUORUM", "quarantined for 10m", "started", "redlock-proxy bootstrap"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("lock on fresh backends = %v; want it to say %q", err, want)
		}
	}
	if strings.Count(err.Error(), h.Backend[0].Addr) != 1 {
		t.Fatalf("each backend once in the reply: %v", err)
	}
	// An extend refused by quarantined backends says so too: it said "not
	// waited for: the round was decided without it" of each (seen with
	// Jedis through a replica whose backends were all quarantined).
	err = h.Client().Eval(t.Context(), harness.ExtendScript, []string{"lock:q"}, "tok", 30000).Err()
	if err == nil || !strings.Contains(err.Error(), "quarantined for 10m") || strings.Contains(err.Error(), "not waited for") {
		t.Fatalf("extend on fresh backends = %v; want each backend's quarantine named", err)
	}
}

// A backend that lost everything but kept running long (an empty server put
// in an old one's place, or a FLUSHALL) is not to be trusted by a replica
// that meets it for the first time: the others carry their markers, it does
// not, so it is quarantined whatever its uptime.
func TestUnmarkedBackendAmongMarkedIsQuarantined(t *testing.T) {
	h := bootstrapped(t, 5, func(c *config.Config) { c.MaxTTL = 2 * time.Second })
	time.Sleep(2500 * time.Millisecond) // every backend is now older than the window
	if err := h.Backend[0].Client().FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	_, addr := h.Serve()
	c := replicaAt(t, addr)
	info := c.Info(t.Context(), "redlock").Val()
	if !strings.Contains(info, "addr="+h.Backend[0].Addr+",state=quarantined") {
		t.Fatalf("a new replica counts the flushed backend at once:\n%s", info)
	}
	if ok, err := c.SetNX(t.Context(), "lock:four", "tok", time.Second).Result(); !ok || err != nil {
		t.Fatalf("locks on the other four = %v, %v", ok, err)
	}
}

// Replies that say the cause and the remedy (issue 13): each backend once,
// no "rollback failed" where nothing was sent, a TTL that can never be
// granted refused up front with the settings that decide it, and the plain
// SET error naming every SET form that is served.
func TestErrorsExplainThemselves(t *testing.T) {
	// The shipped timeout_factor, which makes the shortest TTL 20 ms.
	h := harness.New(t, 3, func(c *config.Config) { c.TimeoutFactor = config.Default().TimeoutFactor })
	c, ctx := h.Client(), t.Context()
	err := c.SetNX(ctx, "lock:short", "v", 5*time.Millisecond).Err()
	for _, want := range []string{"can never be granted", "min_validity", "timeout_factor", "at least 20 ms"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("SET NX PX 5 = %v; want it to say %q", err, want)
		}
	}
	err = c.Set(ctx, "lock:plain", "v", time.Second).Err()
	if err == nil || !strings.Contains(err.Error(), "SET key value XX PX <ms>") || strings.Contains(err.Error(), "XX, KEEPTTL") {
		t.Fatalf("plain SET = %v; want the served forms, XX among them", err)
	}
	h.Backend[1].Kill()
	h.Backend[2].Kill()
	err = c.SetNX(ctx, "lock:down", "v", 10*time.Second).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") || strings.Contains(err.Error(), "rollback") {
		t.Fatalf("SET with two of three backends gone = %v; want NOQUORUM, no rollback failure (nothing was sent)", err)
	}
	for _, b := range h.Backend {
		if n := strings.Count(err.Error(), b.Addr); n > 1 {
			t.Fatalf("%s named %d times in %v", b.Addr, n, err)
		}
	}
}

// safeBuffer is a bytes.Buffer for a logger written from many goroutines.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logs an operator can ship (issue 13): JSON throughout, no false "quorum
// lost" at a start that never had one, a line when a backend leaves
// quarantine, recoveries at INFO without err=<nil>, and the force-unlock
// audit without the key unless log_values.
func TestLogsAnOperatorCanShip(t *testing.T) {
	backends := redistest.Start(t, 3)
	cfg := config.Default()
	cfg.Listen, cfg.LogFormat, cfg.MaxTTL, cfg.HealthInterval = "127.0.0.1:0", "json", 2*time.Second, 100*time.Millisecond
	cfg.NativeLockDelay = 0 // the quarantine window is then max_ttl padded: the wait below fits in 5s
	for _, b := range backends {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: b.Addr})
	}
	var out safeBuffer
	a, err := app.Start(cfg, app.NewLogger(cfg.LogFormat, &out))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	harness.Eventually(t, "the fresh backends leave quarantine", func() bool {
		return strings.Count(out.String(), "backend counts toward lock quorums again") == 3
	})
	backends[1].Kill()
	harness.Eventually(t, "the kill is logged", func() bool { return strings.Contains(out.String(), `"msg":"backend down"`) })
	backends[1].Restart()
	harness.Eventually(t, "the recovery is logged", func() bool { return strings.Contains(out.String(), `"msg":"backend up again"`) })
	ln, err := app.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	c := replicaAt(t, ln.Addr().String())
	if err := c.Do(t.Context(), "redlock", "forceunlock", "secret:customer-42").Err(); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the audit line", func() bool { return strings.Contains(out.String(), "audit: force unlock") })

	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		switch {
		case rec["level"] == "ERROR":
			t.Errorf("an ERROR where nothing went wrong: %s", line)
		case rec["msg"] == "backend up again" && rec["err"] != nil:
			t.Errorf("a recovery with an error attached: %s", line)
		case strings.Contains(line, "customer-42"):
			t.Errorf("the audit line names the key without log_values: %s", line)
		}
	}
}
