package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// A Lock is used from several goroutines: a refresher beside the holder's
// deferred Release.
func TestLockRefreshBesideRelease(t *testing.T) {
	c := client.New(proxy(t))
	ctx := t.Context()
	lock, err := c.Obtain(ctx, "job", 3*time.Second, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			err := lock.Refresh(ctx, 3*time.Second)
			if err != nil && !errors.Is(err, client.ErrLockNotHeld) && !errors.Is(err, client.ErrNoQuorum) {
				t.Errorf("Refresh = %v; want nil, ErrLockNotHeld or (a busy machine) ErrNoQuorum", err)
			}
		}
	}()
	time.Sleep(5 * time.Millisecond)
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := lock.Refresh(ctx, time.Second); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("Refresh after Release = %v; want ErrLockNotHeld", err)
	}
}

func TestLockTTL(t *testing.T) {
	c := client.New(proxy(t))
	ctx := t.Context()
	lock, err := c.Obtain(ctx, "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ttl, err := lock.TTL(ctx); err != nil || ttl <= 50*time.Second || ttl > time.Minute {
		t.Fatalf("TTL = %v, %v; want about a minute", ttl, err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ttl, err := lock.TTL(ctx); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("TTL after Release = %v, %v; want ErrLockNotHeld", ttl, err)
	}
}

// The proxy's refusals come typed, with go-redis's error inside: a TTL it
// never grants, and too few backends.
func TestTypedErrors(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := client.New(h.Client())
	ctx := t.Context()
	var rerr redis.Error
	_, err := c.Obtain(ctx, "job", time.Hour)
	if !errors.Is(err, client.ErrTTL) || errors.Is(err, client.ErrNoQuorum) || !errors.As(err, &rerr) {
		t.Fatalf("Obtain above max_ttl = %v; want ErrTTL wrapping a redis.Error", err)
	}
	h.Backend[0].Kill()
	h.Backend[1].Kill()
	_, err = c.Obtain(ctx, "job", time.Minute)
	if !errors.Is(err, client.ErrNoQuorum) || !errors.As(err, &rerr) || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("Obtain with 1 of 3 backends = %v; want ErrNoQuorum wrapping the NOQUORUM reply", err)
	}
}

// A session lock's Done fires when its connection breaks and it cannot be
// re-attached (here no new connection can be made), without a command of
// the holder's; Release closes it too.
func TestSessionDone(t *testing.T) {
	h := harness.New(t, 0, nil)
	var mu sync.Mutex
	var conns []net.Conn
	var cut atomic.Bool
	rdb := h.Client(func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if cut.Load() {
				return nil, errors.New("the network is down")
			}
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			return nc, err
		}
	})
	c := client.New(rdb)
	ctx := t.Context()
	lock, err := c.Obtain(ctx, "job", 1500*time.Millisecond, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lock.Done():
		t.Fatal("Done before the session ended")
	case <-time.After(time.Second):
	}
	cut.Store(true)
	mu.Lock()
	for _, nc := range conns {
		_ = nc.Close()
	}
	mu.Unlock()
	select {
	case <-lock.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed 5s after the session's connection broke")
	}
	cut.Store(false)
	if err := lock.Refresh(ctx, time.Second); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("Refresh after the session broke = %v; want ErrLockNotHeld", err)
	}

	other, err := c.Obtain(ctx, "job2", 1500*time.Millisecond, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-other.Done():
	default:
		t.Fatal("Done open after Release")
	}
	if (&client.Lock{}).Done() != nil {
		t.Fatal("a lock without a session has a Done channel")
	}
}

// A session lock outlives a rolling upgrade: its replica shuts down
// gracefully (leaving it to its TTL), the client's next connection reaches
// the other replica (a load balancer), and the session re-attaches the
// lock there with the same token, without a command of the holder's; Done
// stays open, another owner is refused all along, and Release frees it.
func TestSessionSurvivesReplicaShutdown(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = 100 * time.Millisecond })
	_, addrB := h.Serve()
	var toB atomic.Bool
	rdb := h.Client(func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr := h.Addr
			if toB.Load() {
				addr = addrB
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	})
	c, ctx := client.New(rdb), t.Context()
	const ttl = 1500 * time.Millisecond
	lock, err := c.Obtain(ctx, "rolled", ttl, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	toB.Store(true) // the load balancer takes A out
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.App.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	other := client.New(replicaClient(t, addrB))
	for deadline := time.Now().Add(3 * ttl); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-lock.Done():
			t.Fatal("Done fired: the session was not re-attached")
		default:
		}
		if _, err := other.Obtain(ctx, "rolled", ttl); !errors.Is(err, client.ErrNotObtained) {
			t.Fatalf("another owner's Obtain while the session holds = %v; want ErrNotObtained", err)
		}
	}
	if tok, err := other.Token(ctx, "rolled"); err != nil || tok != lock.Token() {
		t.Fatalf("Token after the re-attach = %d, %v; want %d", tok, err, lock.Token())
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatalf("Release after the re-attach: %v", err)
	}
	if _, err := other.Obtain(ctx, "rolled", ttl); err != nil {
		t.Fatalf("Obtain after the Release: %v", err)
	}
}

func replicaClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
