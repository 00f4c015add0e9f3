package e2e

// Helper-75: the Go client's session through a rolling upgrade while one
// backend is SIGSTOPped (restart quarantine on). Replica A shuts down
// gracefully while backend 2 is paused; the session re-attaches the lock on
// replica B (same token) with backend 2 still paused; backend 2 resumes
// holding the lock under A's round, which B's renewals neither extend nor
// restore. Backend 0 then restarts empty: B gives the lock up (session_lost)
// while the session's connection is open and Done stays open, and another
// owner obtains the lock.

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestClientRollingUpgradeDuringBackendPause(t *testing.T) {
	sleepBound(t)
	const maxTTL = 4 * time.Second
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick = 250 * time.Millisecond
		c.NodeTimeout = 500 * time.Millisecond
		c.Quarantine, c.MaxTTL = true, maxTTL
	})
	_, addrB := h.Serve()
	var route atomic.Int32
	rdb := h.Client(func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr := []string{h.Addr, addrB}[route.Load()]
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	})
	c, ctx := client.New(rdb), t.Context()
	const key = "pausedbackend:rolling"
	const ttl = 3 * time.Second
	var lock *client.Lock
	harness.Eventually(t, "the session lock (backends out of their first quarantine)", func() bool {
		var err error
		lock, err = c.Obtain(ctx, key, ttl, client.WithSession())
		return err == nil
	})
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, lock.Owner()) == 3 })

	h.Backend[2].Pause()
	time.Sleep(800 * time.Millisecond)
	route.Store(1)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := h.App.Server.Shutdown(sctx); err != nil { // A goes gracefully: the session re-attaches on B
		t.Fatal(err)
	}
	cancel()
	harness.Eventually(t, "the session re-attached on B", func() bool { return sessionLocks(t, replicaAt(t, addrB)) == "1" })
	time.Sleep(300 * time.Millisecond)
	h.Backend[2].Resume()
	time.Sleep(1500 * time.Millisecond)
	h.Backend[0].Restart() // empty: quarantined

	other := client.New(h73Client(t, addrB))
	for deadline := time.Now().Add(25 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-lock.Done():
			t.Logf("the session ended (Done): the holder was told")
			return
		default:
		}
		got, err := other.Obtain(ctx, key, ttl)
		if !errors.Is(err, client.ErrNotObtained) && err == nil {
			_ = got.Release(ctx)
			t.Fatalf("another owner obtained the lock (token %d) while the holder's session (token %d) is live: Done open (notes %q)",
				got.Token(), lock.Token(), review38Notes(h, key))
		}
	}
}
