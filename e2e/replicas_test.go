package e2e

// Helpers for tests that run several proxy replicas over one set of backends.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

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
	h, links, addr1, addr2 := splitReplicas(t, servers, "stall", nil)
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
	if n := h.Holders(key, "v"); n < 2 {
		t.Fatalf("the retry's value is on %d backends, want at least B and C", n)
	}
}

// splitReplicas starts two replicas over servers (three) in one harness: the first reaches
// servers 1 and 2 through toxiproxy links (returned, to slow or stall),
// the second reaches all three directly. mutate adjusts the configuration
// both start from.
func splitReplicas(t *testing.T, servers []*redistest.Server, name string, mutate func(*config.Config)) (h *harness.Harness, links []*toxiproxy.Proxy, slow, direct string) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for i, s := range servers[1:] {
		p := toxiproxy.NewProxy(srv, fmt.Sprint(name, i), "127.0.0.1:0", s.Addr)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		links = append(links, p)
	}
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine, cfg.HealthInterval = "127.0.0.1:0", false, time.Minute
	if mutate != nil {
		mutate(&cfg)
	}
	cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: links[0].Listen}, {Addr: links[1].Listen}}
	h = harness.Of(t, servers, cfg)
	_, slow = h.Serve()
	h.Cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: servers[1].Addr}, {Addr: servers[2].Addr}}
	_, direct = h.Serve()
	return h, links, slow, direct
}
