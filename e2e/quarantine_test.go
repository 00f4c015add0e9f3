package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestRestartQuarantine: A holds a lock on three of five real backends; one
// of the three is killed (kill -9) and restarted empty. With quarantine the
// restarted backend's vote does not count and B cannot win a majority;
// without it B wins while A's window is still open: two owners at once.
// The health check runs once a minute here, so only the run_id read on
// reconnection can notice the restart in time.
func TestRestartQuarantine(t *testing.T) {
	sleepBound(t)
	for _, quarantine := range []bool{true, false} {
		t.Run(fmt.Sprint("quarantine=", quarantine), func(t *testing.T) {
			const ttl = 3 * time.Second
			h := harness.New(t, 5, func(c *config.Config) {
				c.Quarantine = quarantine
				c.MaxTTL = ttl
				c.HealthInterval = time.Minute
			})
			c, ctx := h.Client(), t.Context()
			if quarantine {
				// The backends just started: younger than max_ttl, they are
				// quarantined at first; wait that out.
				if st := h.App.Engine.Status(); st[0].Quarantined <= 0 {
					t.Fatalf("fresh backends are not quarantined at start: %+v", st[0])
				}
				time.Sleep(h.App.Engine.QuarantineWindow())
			}

			start := time.Now()
			if ok, err := c.SetNX(ctx, "lock:q", "A", ttl).Result(); !ok || err != nil {
				t.Fatalf("A's acquire = %v, %v", ok, err)
			}
			harness.Eventually(t, "A's lock on all five", func() bool { return h.Holders("lock:q", "A") == 5 })
			for _, b := range h.Backend[3:] {
				b.Client().Del(ctx, "lock:q", quorum.MetaKey("lock:q")) // A now holds backends 0, 1, 2 only
			}
			h.Backend[0].Restart()

			var err error
			for attempt := 0; attempt < 5 && time.Since(start) < ttl/2; attempt++ {
				var ok bool
				ok, err = c.SetNX(ctx, "lock:q", "B", ttl).Result()
				if ok {
					if quarantine {
						t.Fatalf("B acquired %v after A, inside A's %v window: two owners", time.Since(start), ttl)
					}
					t.Logf("without quarantine B won %v after A, inside A's window: the overlap quarantine prevents", time.Since(start))
					return
				}
				if err != nil && strings.Contains(err.Error(), h.Backend[0].Addr+": quarantined") {
					break
				}
			}
			if !quarantine {
				t.Fatalf("without quarantine B should have won (unsafely), got %v", err)
			}
			if err == nil || !strings.Contains(err.Error(), h.Backend[0].Addr+": quarantined") {
				t.Fatalf("B's acquire = %v; want NOQUORUM naming the restarted backend as quarantined", err)
			}
			if n := h.Holders("lock:q", "B"); n != 0 {
				t.Fatalf("B's failed rounds left its value on %d backends", n)
			}
			if n := h.Holders("lock:q", "A"); n != 2 {
				t.Fatalf("A's value is on %d backends, want the 2 untouched ones", n)
			}
			if info := c.Info(ctx, "redlock").Val(); !strings.Contains(info, "backend0:addr="+h.Backend[0].Addr+",state=quarantined") {
				t.Fatalf("INFO does not show the quarantine:\n%s", info)
			}
		})
	}
}
