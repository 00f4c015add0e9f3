package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// review28LB is a TCP load balancer in front of proxy replicas: each new
// connection goes to the next address of route (then to last), and cut
// breaks the client side of every connection so far while leaving the
// replica side open (a network break the replica has not noticed).
type review28LB struct {
	mu      sync.Mutex
	route   []string
	last    string
	clients []net.Conn
	broken  map[net.Conn]bool // cut: their replica side stays open
	dials   []string          // where each connection went, and when
	addr    string
}

func newReview28LB(t *testing.T, last string) *review28LB {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	lb := &review28LB{last: last, addr: ln.Addr().String(), broken: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			lb.mu.Lock()
			to := lb.last
			if len(lb.route) > 0 {
				to, lb.route = lb.route[0], lb.route[1:]
			}
			lb.clients = append(lb.clients, c)
			lb.dials = append(lb.dials, fmt.Sprintf("%s@%s", to, time.Now().Format("05.000")))
			lb.mu.Unlock()
			up, err := net.Dial("tcp", to)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() {
				_, _ = io.Copy(up, c)
				lb.mu.Lock()
				half := lb.broken[c]
				lb.mu.Unlock()
				if !half {
					_ = up.Close() // the client hung up: so does its replica connection
				}
			}()
			go func() { _, _ = io.Copy(c, up) }()
		}
	}()
	return lb
}

func (lb *review28LB) next(addrs ...string) {
	lb.mu.Lock()
	lb.route = append(lb.route, addrs...)
	lb.mu.Unlock()
}

// cut breaks every client connection so far without closing the replica
// side (half-open there).
func (lb *review28LB) cut() {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, c := range lb.clients {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		lb.broken[c] = true
		_ = c.Close()
	}
	lb.clients = nil
}

// The Go client's own re-attach (client/session.go) behind a load balancer:
// its session connection breaks, the re-attach lands on replica A whose
// links to two backends are slow, the client's read timeout ends it, it
// closes that connection and asks again on a new one, which the balancer
// sends to B: same token, the session goes on and Done does not fire. A's
// round lands late and names A's round on the slow backends; A's
// connection was closed, so A releases the lock at the close by that
// round. Another owner takes the lock while the Go holder's Done is still
// open. (TestReview28StaleReattachReleasesTheRetriedOne is the same with
// raw commands.)
func TestReview28GoClientReattachRetryLosesTheLock(t *testing.T) {
	sleepBound(t)
	servers := redistest.Start(t, 3)
	_, links, addrA, addrB := splitReplicas(t, servers, "goslow", func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor = harness.TestNodeTimeout, harness.TestTimeoutFactor
		c.SessionTick, c.NativeLockDelay = 250*time.Millisecond, 0
	})
	viaB := replicaAt(t, addrB)
	ctx := context.Background()

	lb := newReview28LB(t, addrB)
	rdb := redis.NewClient(&redis.Options{Addr: lb.addr, MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
	defer rdb.Close()
	const key, ttl = "review28:goclient", 4 * time.Second
	lock, err := client.New(rdb).Obtain(ctx, key, ttl, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Release(ctx) }()
	for _, l := range links {
		js := `{"name":"slow","type":"latency","stream":"upstream","toxicity":1,"attributes":{"latency":600}}`
		if _, err := l.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}
	lb.next(addrA) // the re-attach's first connection goes to A, its retry to B
	lb.cut()
	// The session notices at its next ping (a third of the TTL), re-attaches
	// through A (cut off by the read timeout), then through B.
	time.Sleep(ttl / 3)
	deadline := time.Now().Add(ttl)
	healed := false
	for time.Now().Before(deadline) {
		select {
		case <-lock.Done():
			return // the client knows: no holder believes it holds the lock
		default:
		}
		if !healed && time.Since(deadline.Add(-ttl)) > 2*time.Second {
			for _, l := range links {
				l.Toxics.ResetToxics(ctx)
			}
			healed = true
		}
		if ok, err := viaB.SetNX(ctx, key, "thief", time.Second).Result(); err == nil && ok {
			select {
			case <-lock.Done():
				return
			default:
			}
			lb.mu.Lock()
			t.Logf("A %s, B %s; connections through the balancer: %v; thief at %s", addrA, addrB, lb.dials, time.Now().Format("05.000"))
			lb.mu.Unlock()
			t.Fatalf("another owner took %s while the Go client's session lock (token %d) has not ended: "+
				"the re-attach the client abandoned on A was released at its close", key, lock.Token())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if tok, err := viaB.Do(ctx, "LOCK.TOKEN", key, lock.Owner()).Int64(); err != nil || tok != lock.Token() {
		t.Fatalf("LOCK.TOKEN = %d, %v; want %d", tok, err, lock.Token())
	}
}
