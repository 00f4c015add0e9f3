package harness

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/proxy"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Harness is the proxy, in-process on a free port, in front of real
// redis-server backends.
type Harness struct {
	t       testing.TB
	Backend []*redistest.Server
	App     *app.App
	Addr    string
	Cfg     config.Config
}

// New starts n redis-servers (none: embedded backends) and the proxy;
// mutate adjusts the configuration first.
func New(t testing.TB, n int, mutate func(*config.Config)) *Harness {
	t.Helper()
	h := &Harness{t: t}
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	// The backends start fresh, younger than max_ttl: with quarantine they
	// would not count for max_ttl. Quarantine tests switch it back on.
	cfg.Quarantine = false
	// A round's wait for one backend, and a health check's, sized for the
	// machine the tests run on rather than for production: under the race
	// detector, on two cores shared with other builds, the proxy's own
	// goroutines can wait longer than the 250ms default for a CPU, and a
	// backend that answered in 1ms then counts as timed out (or, for the
	// health monitor, as down). A lock round waits the lesser of the node
	// timeout and timeout_factor of the TTL: a twentieth of a 3s session
	// lock is 150ms, so the factor is raised too. Tests of timeouts set
	// their own.
	cfg.NodeTimeout, cfg.TimeoutFactor = TestNodeTimeout, TestTimeoutFactor
	if n > 0 {
		h.Backend = redistest.Start(t, n)
		for _, addr := range redistest.Addrs(h.Backend) {
			cfg.Backends = append(cfg.Backends, config.Backend{Addr: addr})
		}
	}

	if mutate != nil {
		mutate(&cfg)
	}
	if cfg.NodeTimeout == TestNodeTimeout && cfg.NodeTimeout >= cfg.MaxTTL {
		// A test of short locks (max_ttl must exceed node_timeout): a
		// quarter of max_ttl, never below the shipped default.
		cfg.NodeTimeout = max(cfg.MaxTTL/4, config.Default().NodeTimeout)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h.Cfg = cfg
	h.App, h.Addr = h.Serve()
	return h
}

// Serve starts a proxy replica with the harness's configuration (the same
// backends) and returns it and its address; it stops at the test's end.
func (h *Harness) Serve() (*app.App, string) {
	t := h.t
	a, err := app.Start(h.Cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := app.Listen(h.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Server.Serve(ln) }()
	t.Cleanup(func() {
		a.Close()
		if err := <-served; !errors.Is(err, proxy.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return a, ln.Addr().String()
}

// Client is a go-redis client to the proxy that never retries, so every
// error reaches the test.
func (h *Harness) Client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: h.Addr, MaxRetries: -1, ReadTimeout: 10 * time.Second}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Holders counts the backends whose key holds value.
func (h *Harness) Holders(key, value string) int {
	h.t.Helper()
	n := 0
	for _, b := range h.Backend {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		v, err := b.Client().Get(ctx, key).Result()
		cancel()
		if err == nil && v == value {
			n++
		}
	}
	return n
}

// AnyKey reports whether key exists on any of the given live backends.
func AnyKey(t testing.TB, backends []*redistest.Server, key string) bool {
	t.Helper()
	for _, b := range backends {
		n, err := b.Client().Exists(t.Context(), key).Result()
		if err != nil {
			t.Fatalf("backend %s: %v", b.Addr, err)
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// UserKeys lists the keys on a backend other than the engine's own
// (quorum.IsInternal: the notes beside locks, markers, records).
func UserKeys(t testing.TB, c *redis.Client) []string {
	t.Helper()
	keys, err := c.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	out := keys[:0]
	for _, k := range keys {
		if !quorum.IsInternal(k) {
			out = append(out, k)
		}
	}
	return out
}

// The canonical compare-and-delete and compare-and-PEXPIRE scripts.
const (
	UnlockScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	ExtendScript = "if redis.call('GET', KEYS[1]) == ARGV[1]\nthen\n  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\nelse\n  return 0\nend"
)

// The harness's node_timeout and timeout_factor (see New).
const (
	TestNodeTimeout   = 2 * time.Second
	TestTimeoutFactor = 0.5
)

// eventually is how long Eventually polls: generous, since it costs time
// only when the test fails, and a loaded machine can take seconds.
const eventually = 15 * time.Second

// Eventually polls cond for up to 15s: rounds reply at a quorum, and the
// remaining backends' writes land just after.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", eventually, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Of is a harness over backends the test started itself and cfg, serving
// no proxy yet: the test starts its replicas with Serve.
func Of(t testing.TB, backends []*redistest.Server, cfg config.Config) *Harness {
	return &Harness{t: t, Backend: backends, Cfg: cfg}
}
