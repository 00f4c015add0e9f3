package e2e

// Review of the re-attach (issue 28): attacks on LOCK.ACQUIRE ... SESSION by
// the lock's holder on a new connection.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
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

// respCommand encodes args as one RESP array.
func respCommand(args ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// A holder's re-attach that it gave up on (its reply did not come in time:
// replica A's links to two backends are slow) and retried through replica
// B: B answers the lock's token, so the holder believes it holds the lock,
// bound to its new connection, for at least the TTL it asked for. A's stale
// round lands on the slow backends after B's and names A's round there;
// A's connection is closed (the holder hung up on it), so A releases "its"
// session lock at the close, by that round, which the majority names: the
// lock is gone inside the window B's reply promised, and another owner takes
// it. The Go client (client/session.go) does exactly this: a re-attach that
// errors (a read timeout) is closed and sent again on a new connection.
func TestReview28StaleReattachReleasesTheRetriedOne(t *testing.T) {
	servers := redistest.Start(t, 3)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	var links []*toxiproxy.Proxy
	for i, s := range servers[1:] {
		p := toxiproxy.NewProxy(srv, fmt.Sprint("slow", i), "127.0.0.1:0", s.Addr)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		links = append(links, p)
	}
	cfg := config.Default()
	cfg.Listen, cfg.Quarantine, cfg.HealthInterval = "127.0.0.1:0", false, time.Minute
	cfg.NodeTimeout, cfg.TimeoutFactor = harness.TestNodeTimeout, harness.TestTimeoutFactor
	cfg.SessionTick, cfg.NativeLockDelay = 250*time.Millisecond, 0
	cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: links[0].Listen}, {Addr: links[1].Listen}}
	h := harness.Of(t, servers, cfg)
	_, addrA := h.Serve()
	h.Cfg.Backends = []config.Backend{{Addr: servers[0].Addr}, {Addr: servers[1].Addr}, {Addr: servers[2].Addr}}
	_, addrB := h.Serve()
	viaB := replicaAt(t, addrB)
	ctx := context.Background()
	const key, owner, ttl = "review28:stale", "owner", 4000

	holder := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer holder.Close()
	token, err := holder.Do(ctx, "LOCK.ACQUIRE", key, owner, ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		js := `{"name":"slow","type":"latency","stream":"upstream","toxicity":1,"attributes":{"latency":600}}`
		if _, err := l.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}
	// The holder's connection broke; it re-attaches through A, waits 200 ms
	// for the answer, gives up and hangs up.
	nc, err := net.Dial("tcp", addrA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(respCommand("LOCK.ACQUIRE", key, owner, fmt.Sprint(ttl), "SESSION")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_ = nc.Close()
	// ... and again through B, which answers at once.
	retry := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer retry.Close()
	sent := time.Now()
	got, err := retry.Do(ctx, "LOCK.ACQUIRE", key, owner, ttl, "SESSION").Int64()
	if err != nil || got != token {
		t.Fatalf("re-attach through B = %d, %v; want the lock's token %d", got, err, token)
	}
	// A's round lands 600 ms after it was sent, its release at the close
	// 600 ms after that.
	time.Sleep(1800 * time.Millisecond)
	for _, l := range links {
		l.Toxics.ResetToxics(ctx)
	}
	for time.Since(sent) < ttl*time.Millisecond-500*time.Millisecond {
		if ok, err := viaB.SetNX(ctx, key, "thief", time.Second).Result(); err == nil && ok {
			t.Fatalf("another owner took the lock %v after B answered the re-attach (token %d, TTL %d ms, connection still open): "+
				"the abandoned re-attach through A released it at its close", time.Since(sent).Round(time.Millisecond), token, ttl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tok, err := viaB.Do(ctx, "LOCK.TOKEN", key, owner).Int64(); err != nil || tok != token {
		t.Fatalf("LOCK.TOKEN after the stale re-attach = %d, %v; want %d", tok, err, token)
	}
}

// Several re-attaches of one lock by its holder through ONE replica at once
// (a client retrying on fresh connections, or a pool): each answers the
// token, and each connection stays open. The lock must stay renewed by one
// of them while they live. reattach() runs the round first and only then
// unbooks every connection's booking and books its own: the last to book
// need not be the round the backends name last, and then nobody renews it.
func TestReview28ConcurrentReattachOnOneReplicaKeepsItRenewed(t *testing.T) {
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = tick; c.NativeLockDelay = 0 })
	ctx := context.Background()
	viaA := h.Client()
	const ttl = 1500 // ms: six ticks
	for trial := range 3 {
		key := fmt.Sprint("review28:many:", trial)
		first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
		token, err := first.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		var conns []*redis.Client
		for range 6 {
			conns = append(conns, redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1}))
		}
		var wg sync.WaitGroup
		answered := make([]error, len(conns))
		for i, c := range conns {
			_ = c.Ping(ctx).Err() // dialled before the race
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok, err := c.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
				if err == nil && tok != token {
					err = fmt.Errorf("token %d, want %d", tok, token)
				}
				answered[i] = err
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range answered {
			if err == nil {
				ok++
			} else if !isNoQuorum(err) {
				t.Fatalf("trial %d: concurrent re-attach: %v", trial, err)
			}
		}
		_ = first.Close()
		if ok > 0 {
			// At least one live connection was answered the token: the lock
			// must outlive several TTLs while all of them stay open.
			deadline := time.Now().Add(3 * ttl * time.Millisecond)
			for time.Now().Before(deadline) {
				if tok, err := viaA.Do(ctx, "LOCK.ACQUIRE", key, "thief", 1000).Int64(); err == nil {
					t.Fatalf("trial %d: another owner got token %d while %d live connections had been answered the "+
						"re-attach (nobody renews the lock: the last to book is not the round the backends name)", trial, tok, ok)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

var _ = errors.Is
