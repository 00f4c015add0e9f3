package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// review105: a backend flushed (FLUSHALL: same run_id, marker gone) while a
// running replica has known it for longer than the quarantine window was not
// quarantined by that replica (the "lacks the marker" quarantine ran from
// first sight), though README says a flushed backend among marked ones is
// "quarantined for the full window, even with a long uptime"; now the
// marker's loss under the same run starts a quarantine. Lock a is
// held on backends 0 and 1 (2 held a stray key then); the flush loses it on
// 0; b is granted on 0 and 2 while a's window is open: two owners.
func TestReview105FlushedBackendGrantsASecondOwner(t *testing.T) {
	// Health checks every 100ms: the replica reads backend 0 within the
	// 300ms below (a flush is seen at the next check; README).
	h := bootstrapped(t, 3, func(c *config.Config) { c.MaxTTL, c.HealthInterval = 2*time.Second, 100*time.Millisecond })
	ctx := t.Context()
	c := replicaAt(t, h.Addr)
	t.Logf("%s", regexp.MustCompile(`quarantine_window_ms:\d+`).FindString(c.Info(ctx, "redlock").Val()))
	time.Sleep(8 * time.Second) // the replica has known every backend longer than the window
	b2 := h.Backend[2].Client()
	if err := b2.Set(ctx, "r105:k", "stray", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.SetNX(ctx, "r105:k", "a", 1500*time.Millisecond).Result(); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	at := time.Now()
	b2.Del(ctx, "r105:k")
	if err := h.Backend[0].Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // health checks see it, repair it
	info := c.Info(ctx, "redlock").Val()
	ok, err := c.SetNX(ctx, "r105:k", "b", 1500*time.Millisecond).Result()
	t.Logf("b asked %s after a's grant (1.5s TTL): %v %v; backend 0 %s", time.Since(at), ok, err, regexp.MustCompile("backend0:[^\n]*").FindString(info))
	if ok {
		t.Fatalf("b granted while a holds the lock on backend 1 within its window: two owners\n%s", info)
	}
}
