package e2e

// Third adversarial review of the RReadWriteLock change (afe36ac..c184fd9):
// each test here fails on c184fd9 and shows one break.

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestRWWritersThreadReadUnlockRefusedWhenAMinorityIsAhead: the shape of
// TestRWReadUnlockRefusedWhenAMinorityIsAhead (helper-84), but the reader
// is the writer's own thread reading under its write (Redisson's
// downgrade). Its hold count is ahead on D and E only (a failed re-entry's
// stale grant); its unlock judges by them (before = 2) and repairs the
// majority A, B, C, where its one hold went, with OpHashSetHolds TTL 0.
// hashsetholds.lua gives a reader its hold back only where the lock is
// "read" (ok = rw == "read"); here it is "write" (the thread's own writer
// holds it), so every repair is refused: the unlock of a held lock answers
// an error (NOQUORUM).
func TestRWWritersThreadReadUnlockRefusedWhenAMinorityIsAhead(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	c := h.Client()
	s := loadRWScripts(t)
	const name = "rw:{unlock-ahead-under-write}"
	const thread = "uuid-r:1"
	w := &rwClient{c: c, s: s, name: name, owner: thread}
	if ok, err := w.lock(t, true, 60000); !ok || err != nil {
		t.Fatal("write refused", err)
	}
	r := &rwClient{c: c, s: s, name: name, owner: thread}
	if ok, err := r.lock(t, false, 60000); !ok || err != nil {
		t.Fatal("the writer's thread's read refused", err)
	}
	aheadOnDE(t, h, c, r, thread)
	counts := rwHoldCounts(t, h, name, thread)
	if counts[0] != 1 || counts[1] != 1 || counts[2] != 1 {
		t.Skipf("hold counts %v: not the shape this test needs", counts)
	}
	t.Logf("the thread's read hold counts: %v; its writer's: %v", counts, rwHoldCounts(t, h, name, thread+":write"))
	allBackendsVote(t, h, c)
	v, err := r.unlock(t, false, 60000)
	if err != nil {
		t.Errorf("the writer's thread's read unlock of a lock it holds (hold counts %v) = %v, %v; after it: %v", counts, v, err, rwHoldCounts(t, h, name, thread))
	}
}

// TestRWReadUnlockRefusedBesideAnExpiredReadersLockDelay: the shape of
// TestRWReadUnlockRefusedWhenAMinorityIsAhead with lock_delay, and another
// reader R1 whose window ended unreleased while R read. R's hold count is
// ahead on D and E only (a failed re-entry's stale grant); its unlock
// judges by them (before = 2). On A, B, C its one hold goes, the last live
// one there: hashrelease.lua deletes the hash and rwFree keeps R1's
// lock-delay as an unmarked note ("#<delay>", PXAT its end). The repair
// that gives R its hold back there (OpHashSetHolds, TTL 0) finds a free key
// with a note that is not its release's mark, and is refused on each: the
// unlock of a held lock answers an error (NOQUORUM), R's holds gone on the
// majority. Without R1 (control) the same unlock answers.
func TestRWReadUnlockRefusedBesideAnExpiredReadersLockDelay(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) { c.LockDelay = 10 * time.Second })
	c := h.Client()
	s := loadRWScripts(t)
	for _, withR1 := range []bool{false, true} {
		name := fmt.Sprintf("rw:{unlock-ahead-delay-%v}", withR1)
		r := &rwClient{c: c, s: s, name: name, owner: "uuid-r:1"}
		r1 := &rwClient{c: c, s: s, name: name, owner: "uuid-1:2"}
		var r1End time.Time
		if withR1 {
			if ok, err := r1.lock(t, false, 1000); !ok || err != nil {
				t.Fatal("r1 refused", err)
			}
			r1End = time.Now().Add(time.Second)
		}
		if ok, err := r.lock(t, false, 60000); !ok || err != nil {
			t.Fatal("read refused", err)
		}
		aheadOnDE(t, h, c, r, r.owner)
		counts := rwHoldCounts(t, h, name, r.owner)
		if counts[0] != 1 || counts[1] != 1 || counts[2] != 1 {
			t.Skipf("hold counts %v: not the shape this test needs", counts)
		}
		if withR1 {
			time.Sleep(time.Until(r1End) + 300*time.Millisecond) // r1 expired, unreleased: its delay runs
		}
		allBackendsVote(t, h, c)
		v, err := r.unlock(t, false, 60000)
		t.Logf("expired reader beside: %v; hold counts %v; unlock = %v, %v", withR1, counts, v, err)
		if err != nil {
			t.Errorf("expired reader beside: %v: the reader's unlock of a lock it holds (hold counts %v) = %v, %v; after it: %v",
				withR1, counts, v, err, rwHoldCounts(t, h, name, r.owner))
		}
	}
}
