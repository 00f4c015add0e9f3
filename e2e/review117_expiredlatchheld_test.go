package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview117RetryAfterMinorityExpiryReleasesHeldLock: Redisson 3.24+'s
// RLock, 3 backends, one lost answer and one partitioned backend.
//
// The owner takes the lock (1 hold everywhere). Backend 2 is paused (seen
// down) and the owner re-enters: 2 holds on 0 and 1, backend 2 keeps 1
// (behind). Unlock #1 (latch L), still without 2: backends 0 and 1 go to 1
// hold and latch "still held"; it answers 0 (StillHeld) and that answer is
// lost. Backend 2 comes back: now every backend holds the lock once, which
// is the owner's true count (locked twice, unlocked once). Then backend 1
// is partitioned (paused, seen down) while the watchdog renews the lock on
// 0 and 2 (a quorum), long enough for backend 1's copy to expire there.
// Backend 1 comes back without the lock (its latch still says "0").
//
// Redisson resends unlock #1 (the same latch). releaseHash: backend 0
// answers from its latch (still held, owner holds: holding 1), backend 1
// from its latch (still held, the owner does not hold it there), backend 2
// fresh: its single hold is given up, Pre 1, so before = 1; mayHold = 1 < Q
// and the Released branch gives up backend 0's hold too (releaseRest: the
// latched-as-held nodes). The unlock answers 1 and the lock is gone from
// every backend, although the owner holds it once (2 locks, 1 unlock) on
// backends 0 and 2, a quorum, with its window renewed; another owner takes
// it at once while the first is inside its window.
func TestReview117RetryAfterMinorityExpiryReleasesHeldLock(t *testing.T) {
	review117ExpiredLatchHeld(t, 3, []int{2}, 1)
}

// TestReview117RetryAfterMinorityExpiryReleasesHeldLock5: the same with 5
// backends: 3 and 4 are down at the re-entry and at unlock #1 (1 hold,
// behind), backend 2 is partitioned until its copy expires. Before the
// retry the owner holds the lock once on 0, 1, 3 and 4 (4 of 5); the retry
// (0 and 1 latched as held, 2 latched without it, 3 and 4 fresh with 1
// hold: mayHold 2 < 3) answers 1 and removes it from all five.
func TestReview117RetryAfterMinorityExpiryReleasesHeldLock5(t *testing.T) {
	review117ExpiredLatchHeld(t, 5, []int{3, 4}, 2)
}

// review117ExpiredLatchHeld: n backends; the nodes in behind are down at
// the re-entry and unlock #1; node part is partitioned afterwards until its
// copy of the lock expired.
func review117ExpiredLatchHeld(t *testing.T, n int, behind []int, part int) {
	h := harness.New(t, n, func(c *config.Config) {
		c.HealthInterval = 50 * time.Millisecond
		c.NodeTimeout = 300 * time.Millisecond
	})
	c := h.Client()
	ctx := t.Context()
	lock, unlock, renew := clientScript(t, shaRLock), clientScript(t, shaRUnlock), clientScript(t, shaRRenew)
	const name, ch, owner = "{r117a}", "redisson_lock__channel:{r117a}", "uuid-117a:1"
	const latch = "redisson_unlock_latch:{r117a}:req-1"
	const lease = 1500 // ms: the owner's lease, renewed as the watchdog does
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
	doUnlock := func() (any, error) {
		return c.Eval(ctx, unlock, []string{name, ch, latch}, 0, lease, owner, "publish", 30000).Result()
	}
	doRenew := func() (any, error) {
		return c.Eval(ctx, renew, []string{name}, lease, owner).Result()
	}
	holds := func() []string { return holdsOn(h, name, owner) }

	if err := take(owner); err != nil {
		t.Fatalf("lock #1: %v", err)
	}
	harness.Eventually(t, "hold on every backend", func() bool { return holds()[n-1] == "1" })

	resume := func() {
		for _, i := range behind {
			h.Backend[i].Resume()
		}
	}
	for _, i := range behind {
		h.Backend[i].Pause()
		review116WaitUp(t, h, i, false)
	}
	if err := take(owner); err != nil {
		resume()
		t.Fatalf("lock #2 (re-entry): %v", err)
	}
	v, err := doUnlock() // its answer is lost: the client resends it
	t.Logf("unlock attempt 1 (backends %v down) = %v, %v", behind, v, err)
	if v != int64(0) || err != nil {
		resume()
		t.Fatalf("unlock attempt 1 = %v, %v; want 0 (still held)", v, err)
	}
	resume()
	for _, i := range behind {
		review116WaitUp(t, h, i, true)
	}
	if r, err := doRenew(); r != int64(1) || err != nil {
		t.Fatalf("renewal = %v, %v", r, err)
	}
	t.Logf("after unlock attempt 1, backends %v back: holds %v", behind, holds())

	// Backend 1 is partitioned; the watchdog keeps the lock on 0 and 2.
	h.Backend[part].Pause()
	review116WaitUp(t, h, part, false)
	pttl := h.Backend[0].Client().PTTL(ctx, name).Val()
	until := time.Now().Add(pttl + 500*time.Millisecond)
	for time.Now().Before(until) {
		if r, err := doRenew(); r != int64(1) || err != nil {
			h.Backend[part].Resume()
			t.Fatalf("renewal while backend %d is down = %v, %v; want 1", part, r, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	h.Backend[part].Resume()
	review116WaitUp(t, h, part, true)
	if r, err := doRenew(); r != int64(1) || err != nil {
		t.Fatalf("renewal = %v, %v", r, err)
	}
	before := holds()
	t.Logf("before the retry: holds %v (the partitioned backend's copy expired)", before)

	v, err = doUnlock() // the same EVAL, the same latch
	hs := holds()
	held := 0
	for _, x := range hs {
		if x != "-" {
			held++
		}
	}
	t.Logf("retried unlock = %v, %v; holds after %v", v, err, hs)
	other := take("uuid-other:1")
	t.Logf("another owner's lock after the retry: %v (nil: granted)", other)
	if err == nil && v == int64(1) {
		t.Errorf("retried unlock #1 answered 1 (released) for an owner that locked twice and unlocked once, holding the lock on a quorum before it (holds %v); after it the owner holds it on %d, another owner's lock: %v", before, held, other)
	}
	if other == nil {
		t.Errorf("another owner took the lock while the first (2 locks, 1 unlock, renewed) is inside its window")
	}
}
