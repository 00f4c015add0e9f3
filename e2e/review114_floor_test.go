package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestReview114ClientWritesTheCounterFloor: after an upgrade from a
// replica before LockCounterKey, the set of counters lists the old
// client-named counter (redisson_lock_token:{name}), and counterseed.lua
// takes that key's value as the floor of the lock's new counter
// (__redlock:c:...). But that key is an ordinary client key: any client
// deletes it (DEL, or the docs' compare-and-delete) and writes any value
// there (SET NX PX), so the value of the proxy's own counter is the
// client's choice. Here the client puts it just below 2^53 (9.007e15); a
// total wipe then re-seeds from the clock (~1.8e15 in 2026), and the
// lock's next token is far below the one given before the wipe.
func TestReview114ClientWritesTheCounterFloor(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.Quarantine = true
		c.AllowForceRelease = true
		shortWindow(3 * time.Second)(c)
	})
	c := h.Client()
	ctx := t.Context()
	const name, counter = "{dw}", "redisson_lock_token:{dw}"
	acquireToken(t, c, "lock:warm") // the deployment is marked
	// What a replica before 90d21e0 left on the backends for this lock.
	for _, b := range h.Backend {
		bc := b.Client()
		if err := bc.Set(ctx, counter, "4", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := bc.SAdd(ctx, quorum.CountersKey, counter).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Ordinary client commands through the proxy.
	del, derr := c.Del(ctx, counter).Result()
	const chosen = "9007199254740000"
	set, serr := c.SetArgs(ctx, counter, chosen, redis.SetArgs{Mode: "NX", TTL: 2 * time.Second}).Result()
	t.Logf("client: DEL %s = %v, %v; SET %s %s NX PX 2000 = %v, %v", counter, del, derr, counter, chosen, set, serr)
	before := fencedToken(t, c, "a:1")
	t.Logf("RFencedLock token after the client's writes: %d (chosen %s)", before, chosen)
	if fmt.Sprint(before) == "9007199254740001" {
		t.Errorf("the lock's counter (%s) started from the value a client wrote: token %d", quorum.LockCounterKey(counter), before)
	}
	for _, b := range h.Backend {
		b.Restart()
	}
	acquireToken(t, c, "lock:after") // polls until the wiped deployment is marked again (apart from TestReview114FencedTriedBeforeTheWipeIsMarked)
	after := fencedToken(t, c, "b:1")
	t.Logf("RFencedLock token after a total wipe: %d", after)
	if after <= before {
		t.Errorf("RFencedLock token after a total wipe = %d, before = %d: tokens went back", after, before)
	}
}
