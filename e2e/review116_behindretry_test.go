package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// review116WaitUp waits until the proxy's health checks see backend i up
// (up: true) or down (up: false).
func review116WaitUp(t *testing.T, h *harness.Harness, i int, up bool) {
	t.Helper()
	harness.Eventually(t, fmt.Sprintf("backend %d seen up=%v", i, up), func() bool {
		return h.App.Engine.Status()[i].Up == up
	})
}

// TestReview116RetryWithBehindNodeAnswersReleased: Redisson 3.24+'s RLock
// unlock (with its latch, no absentReleased). releaseHash's retry logic
// takes the "before == 1" branch (Released) as soon as ONE node answers
// fresh with a single hold, whatever the latches of the other nodes say:
// their "still held" latches (Pre -1) are neither counted against it nor
// put in releaseRest's rest (only N == 0 && Pre > 0 is), so the lock stays
// with the owner on a quorum while the unlock answers 1.
//
// 3 backends. The owner takes the lock (1 hold everywhere); backend 2 is
// paused until the proxy sees it down, and the owner re-enters (2 holds
// on 0 and 1; nothing is sent to 2, which keeps 1 hold: behind). Unlock #1,
// still without 2: backends 0 and 1 give up one hold (1 left) and latch
// "still held"; it answers 0, and that answer is lost (Redisson resends the
// same EVAL with the same latch after its timeout). Backend 2 comes back
// (same run: no quarantine, its data intact) and backend 1 is paused. The
// retry: backend 0 answers from its latch (still held, owner holds), backend
// 2 fresh: its only hold is given up, Pre 1, before = 1 → Released.
func TestReview116RetryWithBehindNodeAnswersReleased(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.HealthInterval = 50 * time.Millisecond
		c.NodeTimeout = 300 * time.Millisecond
	})
	c := h.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, owner = "{r116b}", "redisson_lock__channel:{r116b}", "uuid-116:1"
	const latch = "redisson_unlock_latch:{r116b}:req-1"
	take := func() error {
		err := c.Eval(ctx, lock, []string{name}, 30000, owner).Err()
		if err == redis.Nil {
			return nil
		}
		if err == nil {
			return fmt.Errorf("taken")
		}
		return err
	}
	doUnlock := func() (any, error) {
		return c.Eval(ctx, unlock, []string{name, ch, latch}, 0, 30000, owner, "publish", 30000).Result()
	}
	holds := func() []string { return holdsOn(h, name, owner) }

	if err := take(); err != nil {
		t.Fatalf("lock #1: %v", err)
	}
	harness.Eventually(t, "hold on every backend", func() bool { return holds()[2] == "1" })

	h.Backend[2].Pause()
	review116WaitUp(t, h, 2, false)
	if err := take(); err != nil {
		h.Backend[2].Resume()
		t.Fatalf("lock #2 (re-entry): %v", err)
	}
	v, err := doUnlock() // its answer is lost: the client resends it
	t.Logf("unlock attempt 1 (backend 2 down) = %v, %v", v, err)
	h.Backend[2].Resume()
	review116WaitUp(t, h, 2, true)
	t.Logf("before the retry: holds %v", holds())

	h.Backend[1].Pause()
	review116WaitUp(t, h, 1, false)
	v, err = doUnlock() // the same EVAL, the same latch
	h.Backend[1].Resume()
	review116WaitUp(t, h, 1, true)
	hs := holds()
	held := 0
	for _, x := range hs {
		if x != "-" {
			held++
		}
	}
	t.Logf("retried unlock = %v, %v; holds after %v", v, err, hs)
	if err == nil && v == int64(1) && held >= 2 {
		t.Errorf("retried unlock answered 1 (released) while the owner still holds the lock on %d of 3 backends (holds %v)", held, hs)
	}
	// Another client cannot take it: the lock the owner was told is gone is held.
	other, oerr := c.Eval(ctx, lock, []string{name}, 30000, "uuid-other:1").Result()
	t.Logf("another owner's lock after the released answer = %v, %v (a number: refused, the lock's PTTL)", other, oerr)
}

// TestReview116RWRetryWithBehindNodeAnswersReleased: the same sequence with
// Redisson 3.24-3.43's RReadWriteLock write unlock (d29c5559:
// absentReleased, the latch written "-2" where the lock is absent since
// d1d78d3). The write lock is taken twice while backend 2 is down (it keeps
// one hold), unlock #1 answers 0 without backend 2 and is lost, and the
// retry with backend 1 down answers 1 while backends 0 and 1 keep the
// writer's hold.
func TestReview116RWRetryWithBehindNodeAnswersReleased(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.HealthInterval = 50 * time.Millisecond
		c.NodeTimeout = 300 * time.Millisecond
	})
	c := h.Client()
	evalsha := evalshaOf(c)
	const name, owner = "rw:{r116}", "uuid-r116:1"
	writer := owner + ":write"
	ch := "redisson_rwlock:{" + name + "}"
	latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s-w1", name, owner)
	take := func() error {
		if v, err := evalsha(rwWriteLockSHA, []string{name}, 30000, writer); v != nil || err != nil {
			return fmt.Errorf("write lock = %v, %v", v, err)
		}
		return nil
	}
	writeUnlock := func() (any, error) {
		return evalsha(rwWriteUnlock324, []string{name, ch, latch}, 1, 30000, writer, "PUBLISH", 30000)
	}
	holds := func() []string { return holdsOn(h, name, writer) }
	if err := take(); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "hold on every backend", func() bool { return holds()[2] == "1" })
	h.Backend[2].Pause()
	review116WaitUp(t, h, 2, false)
	if err := take(); err != nil {
		h.Backend[2].Resume()
		t.Fatal(err)
	}
	v, err := writeUnlock()
	t.Logf("unlock attempt 1 (backend 2 down) = %v, %v", v, err)
	h.Backend[2].Resume()
	review116WaitUp(t, h, 2, true)
	t.Logf("before the retry: holds %v", holds())
	h.Backend[1].Pause()
	review116WaitUp(t, h, 1, false)
	v, err = writeUnlock()
	h.Backend[1].Resume()
	review116WaitUp(t, h, 1, true)
	hs := holds()
	held := 0
	for _, x := range hs {
		if x != "-" {
			held++
		}
	}
	t.Logf("retried write unlock = %v, %v; holds after %v", v, err, hs)
	if err == nil && v == int64(1) && held >= 2 {
		t.Errorf("retried write unlock answered 1 (released) while the writer still holds the lock on %d of 3 backends (holds %v)", held, hs)
	}
}

// holdsOn is owner's hold count on hash lock key on each backend of h ("-"
// where it holds none).
func holdsOn(h *harness.Harness, key, owner string) []string {
	return holdsOnLive(h, key, owner, nil)
}

// holdsOnLive is holdsOn without reading the backends skip marks (paused:
// a read would wait for them), shown as "?".
func holdsOnLive(h *harness.Harness, key, owner string, skip []bool) []string {
	var out []string
	for j, b := range h.Backend {
		if j < len(skip) && skip[j] {
			out = append(out, "?")
			continue
		}
		v, err := b.Client().HGet(context.Background(), key, owner).Result()
		if err != nil {
			v = "-"
		}
		out = append(out, v)
	}
	return out
}

// settledHoldsOn is holdsOn once it reads the same twice, 100 ms apart (at
// most 10 s): a release's finishing in the background (releaseRest, late
// answers) has then landed, however slow the machine.
func settledHoldsOn(h *harness.Harness, key, owner string) []string {
	return settledHoldsOnLive(h, key, owner, nil)
}

// settledHoldsOnLive is settledHoldsOn over the backends skip does not mark.
func settledHoldsOnLive(h *harness.Harness, key, owner string, skip []bool) []string {
	last := holdsOnLive(h, key, owner, skip)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		now := holdsOnLive(h, key, owner, skip)
		if slices.Equal(now, last) {
			return now
		}
		last = now
	}
	return last
}
