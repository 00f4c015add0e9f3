package e2e

// Helper-73's finding against 8b2880b (the Go client's session after a
// re-attach): failed 3 of 3 runs there.

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// A rolling upgrade of three replicas A, B, C behind a load balancer. A
// session lock is taken on A; A shuts down gracefully (its session locks
// left to their TTL) and the session re-attaches the lock on B (new
// connection, same token): fine so far (TestSessionSurvivesReplicaShutdown).
// Then B shuts down gracefully. The session should notice and re-attach
// on C. It does not: session.use adds a fresh oneDial hook to the
// re-attach's connection AFTER that connection dialed, so its pool may
// dial once more. go-redis finds the closed idle connection unhealthy at
// the next Ping, redials quietly (to C), and the Ping succeeds on a
// connection that holds nothing: no re-attach, Done stays open, and the
// lock expires with its TTL. Another owner then takes it while the
// holder's Lock says it holds it.
func TestSessionReattachesAtEachReplicaShutdown(t *testing.T) {
	sleepBound(t)
	const runs = 3
	failed, why := 0, ""
	for range runs {
		if msg := h73SecondShutdown(t); msg != "" {
			failed, why = failed+1, msg
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed: %s", failed, runs, why)
	}
}

func h73SecondShutdown(t *testing.T) string {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = 100 * time.Millisecond })
	appB, addrB := h.Serve()
	_, addrC := h.Serve()
	var route atomic.Int32 // 0: A, 1: B, 2: C
	rdb := h.Client(func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr := []string{h.Addr, addrB, addrC}[route.Load()]
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	})
	c, ctx := client.New(rdb), t.Context()
	const ttl = 1500 * time.Millisecond
	var lock *client.Lock
	harness.Eventually(t, "the session lock", func() bool {
		var err error
		lock, err = c.Obtain(ctx, "h73:rolled", ttl, client.WithSession())
		return err == nil
	})
	shutdown := func(a *app.App) {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := a.Server.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
	}
	other := client.New(h73Client(t, addrC))
	watch := func(d time.Duration, stage string) string {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			select {
			case <-lock.Done():
				return "" // the session ended: the holder was told
			default:
			}
			if got, err := other.Obtain(ctx, "h73:rolled", ttl); !errors.Is(err, client.ErrNotObtained) {
				if err == nil {
					_ = got.Release(ctx)
				}
				return stage + ": another owner's Obtain = " + h73Err(err) + " while the holder's session is live (Done open), token " +
					strconv.FormatInt(lock.Token(), 10)
			}
		}
		return ""
	}
	route.Store(1)
	shutdown(h.App) // A goes: the session re-attaches on B
	if msg := watch(3*ttl, "after A's shutdown"); msg != "" {
		return msg
	}
	route.Store(2)
	shutdown(appB) // B goes: the session must re-attach on C
	// 4 TTLs, plus native_lock_delay (5 s: the lock expired unreleased).
	return watch(4*ttl+6*time.Second, "after B's shutdown")
}

func h73Err(err error) string {
	if err == nil {
		return "<nil> (granted)"
	}
	return err.Error()
}

func h73Client(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
