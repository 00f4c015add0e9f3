package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview118RetryRestoresLevelNodeAboveTrueCount: Redisson 3.24+'s RLock,
// 3 backends, one lost answer. The owner locks twice (2 holds everywhere,
// no backend behind). Backend 2 is paused (seen down) and unlock #1 (latch
// L) runs on 0 and 1: they go to 1 hold and latch "still held"; it answers
// 0 and that answer is lost. Backend 2 comes back, still at 2 holds: the
// first attempt never reached it (level, not behind). Redisson resends
// unlock #1 (the same latch): 0 and 1 answer from their latches (holding),
// backend 2 gives up a hold fresh (Pre 2, 1 left) — the one hold the first
// attempt owed it. The branch `len(latchedHeld) > 0 && before > 0` then
// restoreHolds backend 2 back to Pre = 2: the owner (2 locks, 1 unlock)
// now has 2 holds there. Unlock #2 (a new latch), the owner's last, must
// answer 1 (released) and free the lock, as on Redis; it answers 0 (still
// held: before = 2) and leaves the lock with the owner on every backend,
// where no other owner can take it until its lease runs out.
func TestReview118RetryRestoresLevelNodeAboveTrueCount(t *testing.T) {
	review118LevelRestore(t, 3, []int{2}, 2)
}

// TestReview118RetryRestoresLevelNodeAboveTrueCount5: the same with 5
// backends (3 and 4 down at unlock #1) and 3 holds (re-entrant count 3):
// the retry sets 3 and 4 back to 3 holds while the owner has 2; unlock #2
// answers 0 (must: 0), unlock #3 answers 0 (must: 1, released).
func TestReview118RetryRestoresLevelNodeAboveTrueCount5(t *testing.T) {
	review118LevelRestore(t, 5, []int{3, 4}, 3)
}

func review118LevelRestore(t *testing.T, n int, down []int, count int) {
	h := harness.New(t, n, func(c *config.Config) {
		c.HealthInterval = 50 * time.Millisecond
		c.NodeTimeout = 300 * time.Millisecond
	})
	c := h.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, owner = "{r118a}", "redisson_lock__channel:{r118a}", "uuid-118a:1"
	const lease = 30000
	take := func(who string) error {
		err := c.Eval(ctx, lock, []string{name}, lease, who).Err()
		if err == redis.Nil {
			return nil
		}
		if err == nil {
			return fmt.Errorf("taken")
		}
		return err
	}
	doUnlock := func(latch string) (any, error) {
		return c.Eval(ctx, unlock, []string{name, ch, latch}, 0, lease, owner, "publish", 30000).Result()
	}
	holds := func() []string { return holdsOn(h, name, owner) }
	want := fmt.Sprint(count)
	for i := 0; i < count; i++ {
		if err := take(owner); err != nil {
			t.Fatalf("lock #%d: %v", i+1, err)
		}
	}
	harness.Eventually(t, "holds on every backend", func() bool {
		for _, x := range holds() {
			if x != want {
				return false
			}
		}
		return true
	})
	resume := func() {
		for _, i := range down {
			h.Backend[i].Resume()
		}
	}
	for _, i := range down {
		h.Backend[i].Pause()
		review116WaitUp(t, h, i, false)
	}
	const latch1 = "redisson_unlock_latch:{r118a}:req-1"
	v, err := doUnlock(latch1)
	t.Logf("unlock #1 attempt 1 (backends %v down) = %v, %v; holds %v", down, v, err, holds())
	resume()
	if v != int64(0) || err != nil {
		t.Fatalf("unlock #1 attempt 1 = %v, %v; want 0", v, err)
	}
	for _, i := range down {
		review116WaitUp(t, h, i, true)
	}
	t.Logf("backends %v back: holds %v (owner's true count %d)", down, holds(), count-1)
	v, err = doUnlock(latch1) // the lost answer's retry
	t.Logf("unlock #1 retry = %v, %v; holds %v", v, err, holds())
	if v != int64(0) || err != nil {
		t.Fatalf("unlock #1 retry = %v, %v; want 0", v, err)
	}
	after := holds()
	for k := 2; k <= count; k++ {
		latch := fmt.Sprintf("redisson_unlock_latch:{r118a}:req-%d", k)
		v, err = doUnlock(latch)
		t.Logf("unlock #%d = %v, %v; holds %v", k, v, err, holds())
		wantV := int64(0)
		if k == count {
			wantV = 1
		}
		if err != nil || v != wantV {
			t.Errorf("unlock #%d of %d locks = %v, %v; want %d (holds after the retry of unlock #1: %v)", k, count, v, err, wantV, after)
		}
	}
	other := take("uuid-other:1")
	t.Logf("another owner's lock after the owner's last unlock: %v (nil: granted); holds %v", other, holds())
	if other != nil {
		t.Errorf("after the owner's last unlock (%d locks, %d unlocks) another owner cannot take the lock: %v", count, count, other)
	}
}
