package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestQuarantineCannotBeForged is issue 23 A4: A holds a lock on backends
// 0, 1, 2 of five; backend 0 restarts empty and is quarantined. A client
// (every client is an admin without authentication) writes the deployment
// marker naming backend 0's new run_id through the proxy, again and again:
// the write lands on backend 0 before its rollback, and a health check that
// read it ended the quarantine, so B won A's lock. The write is refused
// now, the quarantine holds, and B is refused.
func TestQuarantineCannotBeForged(t *testing.T) {
	sleepBound(t)
	const ttl = 4 * time.Second
	h := harness.New(t, 5, func(c *config.Config) {
		c.Quarantine = true
		c.MaxTTL = ttl
		c.HealthInterval = 20 * time.Millisecond
	})
	c, ctx := h.Client(), t.Context()
	if st := h.App.Engine.Status(); st[0].Quarantined > 0 {
		time.Sleep(h.App.Engine.QuarantineWindow()) // fresh backends start quarantined
	}
	start := time.Now()
	if ok, err := c.SetNX(ctx, "lock:f", "A", ttl).Result(); !ok || err != nil {
		t.Fatalf("A's acquire = %v, %v", ok, err)
	}
	harness.Eventually(t, "A's lock on all five", func() bool { return h.Holders("lock:f", "A") == 5 })
	for _, b := range h.Backend[3:] {
		b.Client().Del(ctx, "lock:f", quorum.MetaKey("lock:f")) // A now holds backends 0, 1, 2 only
	}
	h.Backend[0].Restart()
	harness.Eventually(t, "backend 0 quarantined", func() bool { return h.App.Engine.Status()[0].Quarantined > 0 })
	info, err := h.Backend[0].Client().Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	runID := strings.Fields(info[strings.Index(info, "run_id:")+len("run_id:"):])[0]
	forged := 0
	for time.Since(start) < ttl/2 && h.App.Engine.Status()[0].Quarantined > 0 {
		err := c.SetNX(ctx, quorum.IntactKey, runID, 10*time.Second).Err()
		if err == nil || !strings.Contains(err.Error(), quorum.InternalPrefix) {
			forged++
		}
	}
	if forged > 0 {
		t.Errorf("%d writes of the marker were not refused", forged)
	}
	if ok, err := c.SetNX(ctx, "lock:f", "B", ttl).Result(); ok {
		t.Fatalf("B acquired %v after A, inside A's %v window: two owners (quarantine ended by a forged marker)", time.Since(start), ttl)
	} else if err == nil || !strings.Contains(err.Error(), h.Backend[0].Addr+": quarantined") {
		t.Fatalf("B's acquire = %v; want NOQUORUM naming the restarted backend as quarantined", err)
	}
}
