package e2e

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/proxy"
)

// Review of issue 23 B: a total wipe while no replica runs. X holds a
// lock through replica A; replica A stops (a crash, a SIGKILL, a rolling
// restart); every backend restarts empty (a power loss) before any
// replica meets them again, so none carries a max-TTL record. Bootstrap
// (run again by an operator or a deploy script, trusting it to refuse an
// existing deployment) finds every backend young, unmarked and unrecorded,
// and marks them; a replica started after meets each with its current
// run's marker at first sight and counts it at once: Y wins X's lock
// inside X's window.
func TestBootstrapAfterTotalWipeWithNoReplicaRunning(t *testing.T) {
	t.Skip("finding: bootstrap cannot tell a new deployment from one wiped whole while no replica ran (no marker, no record, all young); a replica started after counts the marked backends at first sight, so a lock granted before the wipe has a second owner. Fix not local: the backends alone cannot prove no lock was granted")
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine = "127.0.0.1:0", true
	backends := redistest.Start(t, 3)
	for _, addr := range redistest.Addrs(backends) {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: addr})
	}
	shortWindow(20 * time.Second)(&cfg)
	if err := app.BootstrapConfig(cfg, io.Discard); err != nil {
		t.Fatalf("bootstrap of fresh backends: %v", err)
	}
	h := harness.Of(t, backends, cfg)

	// Replica A, stopped by the test.
	a, err := app.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := app.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Server.Serve(ln) }()
	ca := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ReadTimeout: 20 * time.Second})
	defer ca.Close()
	ctx := t.Context()
	if ok, err := ca.SetNX(ctx, "lock:b4", "X", 15*time.Second).Result(); !ok || err != nil {
		t.Fatalf("X's acquire = %v, %v", ok, err)
	}
	a.Close()
	if err := <-served; !errors.Is(err, proxy.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	for _, b := range h.Backend {
		b.Restart()
	}
	err = app.BootstrapConfig(cfg, io.Discard)
	if err == nil {
		t.Log("bootstrap marked the wiped backends of an existing deployment")
	}
	_, addr := h.Serve() // replica B (or A restarted)
	neverGranted(t, "lock:b4", "Y", 10*time.Second, 3*time.Second, replicaAt(t, addr))
}
