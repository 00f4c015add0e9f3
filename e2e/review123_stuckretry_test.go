package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview123RetryOfReleasedUnlockNeverAnswered: one replica. The owner
// locks twice; E is down for unlock #1 (documented: E stays one hold
// ahead). Unlock #2 runs while E is stalled (CLIENT PAUSE): without E,
// before == 1, it answers 1 and the lock is gone from A..D; E applies the
// release late (2 -> 1, latch "still held"). Redisson retries unlock #2
// (same latch): A..D latch "1", E latch "0" with the owner holding there.
// A retry must answer 1 (what the first attempt said, and one Redis would):
// c3d6a0e's NOQUORUM for latches that disagree while the owner holds the
// lock where one says still held answered NOQUORUM on every retry while
// the latches lived (helper-123; reverted).
func TestReview123RetryOfReleasedUnlockNeverAnswered(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) {
		c.HealthInterval = 50 * time.Millisecond
		c.NodeTimeout = 300 * time.Millisecond
	})
	c := h.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const owner = "uuid-123c:1"
	for trial, pause := range []int{1200, 1200} {
		name := fmt.Sprintf("{r123c-%d}", trial)
		ch := "redisson_lock__channel:" + name
		for i := 0; i < 2; i++ {
			if err := c.Eval(ctx, lock, []string{name}, 30000, owner).Err(); err != redis.Nil {
				t.Fatalf("lock #%d: %v", i+1, err)
			}
		}
		h.Backend[4].Pause()
		review116WaitUp(t, h, 4, false)
		v1, err1 := c.Eval(ctx, unlock, []string{name, ch, "redisson_unlock_latch:" + name + ":req-1"}, 0, 30000, owner, "publish", 30000).Result()
		h.Backend[4].Resume()
		review116WaitUp(t, h, 4, true)
		mid := holdsOn(h, name, owner)
		latch2 := "redisson_unlock_latch:" + name + ":req-2"
		if err := h.Backend[4].Client().Do(ctx, "CLIENT", "PAUSE", pause, "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		v2, err2 := c.Eval(ctx, unlock, []string{name, ch, latch2}, 0, 30000, owner, "publish", 30000).Result()
		// E applies unlock #2 once its pause ends: wait for its latch (at
		// most 10 s past the pause), not a fixed time.
		for deadline := time.Now().Add(time.Duration(pause)*time.Millisecond + 10*time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if h.Backend[4].Client().Exists(ctx, latch2).Val() == 1 {
				break
			}
		}
		review116WaitUp(t, h, 4, true)
		after2 := settledHoldsOn(h, name, owner)
		e := h.Backend[4].Client().Get(ctx, latch2).Val()
		var retries []string
		for k := 0; k < 3; k++ {
			v, err := c.Eval(ctx, unlock, []string{name, ch, latch2}, 0, 30000, owner, "publish", 30000).Result()
			retries = append(retries, fmt.Sprint(v, " ", err))
		}
		t.Logf("pause %d: unlock#1 %v %v; holds %v; unlock#2 %v %v; holds %v (E latch %q); retries %v; holds %v",
			pause, v1, err1, mid, v2, err2, after2, e, retries, holdsOn(h, name, owner))
		if v2 == int64(1) && err2 == nil && !slices.Contains(retries, "1 <nil>") {
			t.Errorf("pause %d: unlock #2 answered 1; its retry (same latch) answers %v, the lock held for the owner on %v", pause, retries, after2)
		}
	}
}
