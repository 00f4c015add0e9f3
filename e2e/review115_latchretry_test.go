package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview115RetriedUnlockAnswersReleasedWhileHeld: Redisson 3.24-3.43's
// RReadWriteLock write unlock (d29c5559, absentReleased with a latch). Since
// 8f117c9 a node where the lock is absent writes "1" in the unlock latch
// (hashrelease.lua absent()). The retry logic of releaseHash then counts
// that node's latch as latchedReleased, and "latchedHeld > latchedReleased"
// (the only branch that demands Q nodes holding the lock) no longer wins:
// a retried unlock of a lock held twice answers 1 (released) while the
// owner still holds it once on a quorum. Before 8f117c9 the absent node
// answered -2 (no latch), latchedHeld 1 > latchedReleased 0, holding 1 < Q:
// an error, which the client retries.
//
// 3 backends: the writer takes the lock twice while backend 2 is down; it
// comes back empty (quarantine off); unlock #1 answers 0 (still held: A and
// B keep one hold, their latches say 0, C's said 1 on 8f117c9, -2 since); its answer is lost and
// the client sends the same unlock again (same latch) while B is paused.
func TestReview115RetriedUnlockAnswersReleasedWhileHeld(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	ctx := t.Context()
	evalsha := evalshaOf(c)
	const name, owner = "rw:{r115}", "uuid-r:1"
	writer := owner + ":write"
	ch := "redisson_rwlock:{" + name + "}"
	latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s-w1", name, owner)
	writeUnlock := func() (any, error) {
		return evalsha(rwWriteUnlock324, []string{name, ch, latch}, 1, 30000, writer, "PUBLISH", 30000)
	}

	h.Backend[2].Kill()
	for i := range 2 {
		if v, err := evalsha(rwWriteLockSHA, []string{name}, 30000, writer); v != nil || err != nil {
			t.Fatalf("write lock #%d = %v, %v; want nil (held)", i+1, v, err)
		}
	}
	h.Backend[2].Restart()
	// Wait until the restarted backend takes part in rounds again.
	i := 0
	harness.Eventually(t, "backend 2 answering rounds", func() bool {
		i++
		k := fmt.Sprintf("probe:%d", i)
		_ = c.SetNX(ctx, k, "p", 30*time.Second).Err()
		return h.Holders(k, "p") == 3
	})

	v, err := writeUnlock()
	if v != int64(0) || err != nil {
		t.Fatalf("unlock #1 of a lock held twice = %v, %v; want 0 (still held)", v, err)
	}
	for j, b := range h.Backend {
		lv, _ := b.Client().Get(ctx, latch).Result()
		hv, _ := b.Client().HGet(ctx, name, writer).Result()
		t.Logf("after unlock #1: backend %d latch=%q holds=%q", j, lv, hv)
	}

	// The answer is lost; the client retries with the same latch while
	// backend 1 is paused.
	h.Backend[1].Pause()
	v, err = writeUnlock()
	h.Backend[1].Resume()
	held := 0
	for j, b := range h.Backend {
		hv, _ := b.Client().HGet(ctx, name, writer).Result()
		t.Logf("after the retry: backend %d holds=%q", j, hv)
		if hv == "1" {
			held++
		}
	}
	t.Logf("retried unlock = %v, %v; the writer holds the lock on %d of 3 backends", v, err, held)
	if v == int64(1) && held >= 2 {
		t.Errorf("retried unlock answered 1 (released) while the writer still holds the lock once on %d of 3 backends (a quorum)", held)
	}
}
