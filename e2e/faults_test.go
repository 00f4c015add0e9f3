package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// faultEnv is five real redis-servers, each behind two toxiproxy links:
// tox[0] for the in-process replica, tox[1] for the child replica, so that
// a scenario can break one replica's links alone.
type faultEnv struct {
	t     *testing.T
	redis []*redistest.Server
	tox   [2][]*toxiproxy.Proxy
}

const suiteMaxTTL = 3 * time.Second

func newFaultEnv(t *testing.T) *faultEnv {
	e := &faultEnv{t: t, redis: redistest.Start(t, 5)}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for replica := range e.tox {
		for i, r := range e.redis {
			p := toxiproxy.NewProxy(srv, fmt.Sprint("redis", i, "-", replica), "127.0.0.1:0", r.Addr)
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Stop)
			e.tox[replica] = append(e.tox[replica], p)
		}
	}
	return e
}

// toxic adds a toxic (JSON as toxiproxy's API takes it) to backend i's
// links from both replicas.
func (e *faultEnv) toxic(i int, name, typ, stream string, toxicity float64, attrs string) {
	e.t.Helper()
	e.toxicOn(0, i, name, typ, stream, toxicity, attrs)
	e.toxicOn(1, i, name, typ, stream, toxicity, attrs)
}

// toxicOn adds a toxic to backend i's link from one replica only.
func (e *faultEnv) toxicOn(replica, i int, name, typ, stream string, toxicity float64, attrs string) {
	e.t.Helper()
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":%v,"attributes":%s}`, name, typ, stream, toxicity, attrs)
	if _, err := e.tox[replica][i].Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		e.t.Fatalf("toxic %s on backend %d: %v", name, i, err)
	}
}

func (e *faultEnv) clearToxics() {
	for _, links := range e.tox {
		for _, p := range links {
			p.Toxics.ResetToxics(context.Background())
		}
	}
}

// childReplica runs this test binary as a proxy process (see TestMain) with
// cfg's backends and settings, so that a test can pause it for real with
// SIGSTOP. It is killed at the test's end.
func childReplica(t *testing.T, cfg config.Config) (string, *exec.Cmd) {
	t.Helper()
	port, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := port.Addr().String()
	port.Close()
	var backends []string
	for _, b := range cfg.Backends {
		backends = append(backends, b.Addr)
	}
	child := exec.Command(os.Args[0], "-listen", addr, "-backends", strings.Join(backends, ","),
		fmt.Sprint("-quarantine=", cfg.Quarantine), "-max-ttl", cfg.MaxTTL.String(), "-node-timeout", cfg.NodeTimeout.String(),
		"-health-interval", cfg.HealthInterval.String(), "-timeout-factor", fmt.Sprint(cfg.TimeoutFactor),
		"-min-validity", cfg.MinValidity.String(), "-session-tick", cfg.SessionTick.String(),
		"-lock-delay", cfg.LockDelay.String(), "-native-lock-delay", cfg.NativeLockDelay.String())
	child.Env = append(os.Environ(), childEnv+"=1")
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Signal(syscall.SIGCONT); _ = child.Process.Kill(); _ = child.Wait() })
	return addr, child
}

// replicas starts two proxies over the toxiproxy links: one in this process
// and one child process (this test binary, run as the proxy), so that a
// replica can be paused for real. They stop at the end of the scenario.
func (e *faultEnv) replicas(t *testing.T, mutate, mutateChild func(*config.Config)) (addrs [2]string, child *exec.Cmd) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.MaxTTL = suiteMaxTTL
	cfg.NodeTimeout = 200 * time.Millisecond
	cfg.HealthInterval = 200 * time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	childCfg := cfg
	for _, p := range e.tox[0] {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: p.Listen})
	}
	for _, p := range e.tox[1] {
		childCfg.Backends = append(childCfg.Backends, config.Backend{Addr: p.Listen})
	}
	if mutateChild != nil {
		mutateChild(&childCfg)
	}
	a, err := app.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	t.Cleanup(a.Close)
	addrs[0] = ln.Addr().String()

	addrs[1], child = childReplica(t, childCfg)
	for _, addr := range addrs {
		waitUsable(t, addr)
	}
	return addrs, child
}

// waitUsable waits until a replica answers and sees every backend up and
// out of quarantine.
func waitUsable(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(2*suiteMaxTTL + 5*time.Second)
	for {
		info, err := c.Info(context.Background(), "redlock").Result()
		if err == nil && !strings.Contains(info, "state=down") && !strings.Contains(info, "state=quarantined") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not usable: %v\n%s", addr, err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// load has 30 clients contend through both replicas on a few keys for d,
// recording every acquire and release, while fault runs beside them.
func load(t *testing.T, addrs [2]string, d time.Duration, ttls func() time.Duration, fault func(h *history)) *history {
	h := newHistory()
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			c := redis.NewClient(&redis.Options{Addr: addrs[i%2], MaxRetries: -1, PoolSize: 1,
				ReadTimeout: 10 * time.Second, DialTimeout: time.Second})
			defer c.Close()
			ctx := context.Background()
			for n := 0; time.Now().Before(stop); n++ {
				key, owner, ttl := fmt.Sprint("lock:", rand.IntN(4)), fmt.Sprintf("c%d-%d", i, n), ttls()
				sent := time.Now()
				ok, err := c.SetNX(ctx, key, owner, ttl).Result()
				replied := time.Now()
				var released time.Time
				if ok {
					hold := time.Duration(rand.Int64N(int64(ttl / 2)))
					if rand.IntN(20) == 0 {
						hold = ttl + ttl/2 // now and then an owner overstays: its window ends anyway
					}
					time.Sleep(hold)
					released = time.Now()
					_ = c.Eval(ctx, harness.UnlockScript, []string{key}, owner).Err()
				} else {
					time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
				}
				h.attempt(key, owner, sent, replied, ttl, ok, err, released)
			}
		})
	}
	if fault != nil {
		wg.Go(func() { fault(h) })
	}
	wg.Wait()
	return h
}

func randomTTL() time.Duration { return time.Duration(200+rand.IntN(1800)) * time.Millisecond }

// lockKeys lists a backend's lock keys: not the engine's own, and not
// fencing token counters, which live forever by design (as Redisson's do on
// one Redis).
func lockKeys(t *testing.T, c *redis.Client) []string {
	var out []string
	for _, k := range harness.UserKeys(t, c) {
		if !strings.HasPrefix(k, "redisson_lock_token:") {
			out = append(out, k)
		}
	}
	return out
}

// audit counts keys without a TTL now, and keys still present once every
// TTL a client could have asked for has run out.
func (e *faultEnv) audit(t *testing.T, wait time.Duration) (noTTL, leaked int) {
	ctx := context.Background()
	for _, r := range e.redis {
		for _, k := range lockKeys(t, r.Client()) {
			if ttl, _ := r.Client().PTTL(ctx, k).Result(); ttl == -1 {
				noTTL++
			}
		}
	}
	time.Sleep(wait)
	for _, r := range e.redis {
		leaked += len(lockKeys(t, r.Client()))
	}
	return noTTL, leaked
}
