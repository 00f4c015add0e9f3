package e2e

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview114FencedTriedBeforeTheWipeIsMarked: after a total wipe, an
// RFencedLock tryLock sent before the replicas marked the backends again
// (they still quarantine, or vote but are not marked yet) fails, but its
// script ran on every backend: hashacquire.lua made the lock's counter
// (__redlock:c:...) from __redlock:token, which the wipe removed, so from
// 0. The marking of a wiped deployment raises only __redlock:token to the
// clock's seed (tendCounters: repair(i, {TokenKey: seed})), never the
// lock's own counter, which then counts on from where the failed tries
// left it: the lock's next token is a small number, below every token it
// was given before the wipe. (TestTokensIncreaseAcrossATotalWipe passes
// only because its LOCK.ACQUIRE polls until the marking first.)
func TestReview114FencedTriedBeforeTheWipeIsMarked(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.Quarantine = true
		shortWindow(time.Second)(c)
	})
	c := h.Client()
	acquireToken(t, c, "lock:warm") // the deployment is marked: the lock's counter starts from the clock's seed
	var before int64
	for i := range 3 {
		before = fencedToken(t, c, "a"+string(rune('0'+i))+":1")
	}
	for _, b := range h.Backend {
		b.Restart()
	}
	// Redisson's lock() retries while refused, as fencedToken polls.
	after := fencedToken(t, c, "b:1")
	t.Logf("RFencedLock {dw}: token %d before a total wipe, %d after", before, after)
	if after <= before {
		t.Errorf("RFencedLock token after a total wipe = %d, before = %d: tokens went back", after, before)
	}
}
