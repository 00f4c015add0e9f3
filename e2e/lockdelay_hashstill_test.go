package e2e

import (
	"testing"
	"time"
)

// TestStillHeldUnlock310DoesNotReviveAnExpiredLock (helper-80, failed 3 of
// 3 on 4908e51, seen): a Redisson lock taken twice
// (hold count 2) on 0, 1, 2 of 5; the watchdog's renewal reaches 0 only;
// the lease ends on 1 and 2 (their notes keep lock_delay): the lock
// expired unreleased on a majority. The holder's two unlocks (Redisson
// 3.10.0's script: absent counts as released) follow. The first finds
// count 2 on 0 and "absent" on 1..4: StillHeld, and OpHashSetHolds gives
// the owner a hold on 1, 2, 3, 4, over the notes of the lock-delay on 1
// and 2. The second then deleted the lock on all five, Q deletes, and
// unmarked: another owner's SET NX PX was granted inside the lock-delay.
// Now a StillHeld repair goes only to nodes that held the lock, and never
// sets a free key beside a note but its own release's mark
// (hashsetholds.lua): the first unlock answers NOQUORUM.
func TestStillHeldUnlock310DoesNotReviveAnExpiredLock(t *testing.T) {
	const (
		key   = "{hd:re310}"
		owner = "uuid-h:1"
		lease = 1500 * time.Millisecond
		delay = 6 * time.Second
	)
	rig := newHashDelayRig(t, key, owner, delay, 1, 2)
	windowEnd := rig.lockOn012(t, key, owner, lease, 2, 0)
	rig.state(t, key, "after the lease ended on 1 and 2")
	for i := range 2 {
		res, err := rig.r2.EvalSha(t.Context(), shaRUnlock310, []string{key, "redisson_lock__channel:" + key}, 0, lease.Milliseconds(), owner).Result()
		t.Logf("3.10 unlock #%d through replica 2 = %v, %v", i+1, res, err)
		rig.state(t, key, "after the unlock")
	}
	rig.refusedWithinDelay(t, key, owner, windowEnd, delay, "the lock expired unreleased on 1, 2 (and never was on 3, 4); the first unlock's StillHeld repair gave the owner holds on 1..4 over the lock-delay's notes, the second deleted it on Q and unmarked")
}

// TestStillHeldUnlockDoesNotReviveAnExpiredLock (helper-80, failed 3 of 3
// on 4908e51, seen): the same with Redisson
// 3.24+'s unlock (latch; absent is "not held"). Backends 3 and 4 do not
// answer the first unlock (paused 1 s, a node timeout): 0 says count 2, 1
// and 2 say absent (2 = N-Q not-held answers): StillHeld, and the repair
// gives the owner a hold on 1 and 2 over their lock-delay notes, a quorum
// again (0, 1, 2). The second unlock deleted it on 0, 1, 2 (3, 4 absent),
// Q deletes: Released, unmarked, and the lock that expired unreleased on a
// majority was free inside its lock-delay.
func TestStillHeldUnlockDoesNotReviveAnExpiredLock(t *testing.T) {
	const (
		key   = "{hd:re}"
		owner = "uuid-h:1"
		lease = 1500 * time.Millisecond
		delay = 6 * time.Second
	)
	rig := newHashDelayRig(t, key, owner, delay, 1, 2)
	windowEnd := rig.lockOn012(t, key, owner, lease, 2, 0)
	rig.state(t, key, "after the lease ended on 1 and 2")
	unlock := clientScript(t, shaRUnlock)
	for i := range 2 {
		if i == 0 {
			rig.servers[3].Pause()
			rig.servers[4].Pause()
		}
		res, err := rig.r2.Eval(t.Context(), unlock, []string{key, "redisson_lock__channel:" + key, "redisson_unlock_latch:" + key + ":" + string(rune('1'+i))},
			0, lease.Milliseconds(), owner, "publish", 10000).Result()
		if i == 0 {
			rig.servers[3].Resume()
			rig.servers[4].Resume()
		}
		t.Logf("unlock #%d through replica 2 = %v, %v", i+1, res, err)
		rig.state(t, key, "after the unlock")
	}
	rig.refusedWithinDelay(t, key, owner, windowEnd, delay, "the lock expired unreleased on 1, 2 (never was on 3, 4); the first unlock's StillHeld repair gave the owner holds on 1 and 2 over the lock-delay's notes, the second deleted it on Q and unmarked")
}

// TestReleasedWithASlowHolderIsFreedOnceItAnswers (helper-80, liveness;
// failed 3 of 3 on 4908e51, seen): a Redisson lock (lease
// 20 s, lock_delay 3 s) granted on 0, 1, 2 (3 and 4 refused it: down at the
// time). Its holder unlocks it inside its lease while backend 2 stalls a
// little over a node timeout. 0 and 1 delete it (marked), 3 and 4 say
// absent (N-Q of them): Released, answer 1; but only 2 of Q=3 deleted it,
// so its marks stay, and backend 2, finished by OpHashUnhold with the mark
// once it wakes, deletes the lock too, marked. Q nodes did delete the lock
// (2's late answer, and its unhold, show it), but nothing unmarked: the
// lock whose unlock answered 1 stayed taken for its whole lease plus
// lock_delay. Now the finishing round's deletes and the late answers are
// counted again (releaseRest), and Q of them remove the marks.
func TestReleasedWithASlowHolderIsFreedOnceItAnswers(t *testing.T) {
	releasedWithAStalledHolder(t, "{hd:slow}", 1300*time.Millisecond, 3*time.Second)
}
