package e2e

// helper-100's review of the permit semaphore (commit 434d45d): each test
// states the promise it checks and fails where the product breaks it. Three
// failed on 59a6acd (the clock step-back, the late DEL, the tombstone) and
// pass since the force release reads first, lease updates carry versions
// and tombstones name the generations they deleted.

import (
	"context"
	"testing"
	"time"
)

// updateLeaseAt sends updateLeaseTime(id, lease) with the client's clock
// read as clock (Redisson's ARGV[3], System.currentTimeMillis()).
func (s *r98Sem) updateLeaseAt(id string, leaseMS, clock int64) (any, error) {
	return s.eval(context.Background(), r98Lease, []string{s.name, s.timeouts(), s.channel()}, id, clock+leaseMS, clock, "PUBLISH")
}

// TestReview100ShorteningOvertakesLengtheningClockStepBack: helper-99's
// TestReview99LateShorteningAfterLengthening, with the client's clock
// 100ms lower at the lengthening than at the shortening (an NTP step
// back, or the permit id's holder updating from a second host whose clock
// is 100ms behind: updateLeaseTime takes any permit id). A 1-permit
// semaphore; X holds it (2s). updateLeaseTime(X, 1s) at clock T through
// replica 0 (D, E 400ms late) is answered 1 by A, B, C. Then
// updateLeaseTime(X, 2.9s) at clock T-100 through replica 1 (A, B cut
// off) is answered 1 by C, D, E: X's window now runs 2.9s. The
// shortening's late copies then land on D, E: their last stamp is T-100
// < T, so the shorter lease "is newer" and lands. X's 2.9s rests on C
// alone, and Y is granted ~1.5s into it: two holders of one permit.
func TestReview100ShorteningOvertakesLengtheningClockStepBack(t *testing.T) {
	sleepBound(t)
	r100LateShortening(t, "r100:clockback", func(clock int64) int64 { return clock - 100 }, "X's last lease; the client's clock 100ms back")
}

// r100LateShortening: a 1-permit semaphore; X holds it (2 s).
// updateLeaseTime(X, 1s) at the client's clock T through replica 0 (its
// links to D, E 400 ms late) is answered 1 by A, B, C; then
// updateLeaseTime(X, 2.9s) at clock lengthenAt(T) through replica 1 (its
// links to A, B cut off) is answered 1 by C, D, E; the shortening's late
// copies land on D, E. Y must not be granted inside X's 2.9 s window
// (the test fails saying why X counts on it).
func r100LateShortening(t *testing.T, name string, lengthenAt func(clock int64) int64, why string) {
	t.Helper()
	e, s0, s1 := r98Replicas(t, name)
	s0.mustTrySet(1)
	x, y := r98ID(), r98ID()
	s0.mustAcquire(2000, x)
	_, _ = s1.acquired() // replica 1's links to the backends opened
	for _, i := range []int{3, 4} {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":400}`)
	}
	clock := time.Now().UnixMilli()
	r, err := s0.updateLeaseAt(x, 1000, clock)
	t.Logf("updateLeaseTime(X, 1s) at clock T through replica 0 (D, E slow) = %s", r98Show(r, err))
	if err != nil || r != int64(1) {
		t.Skip("the shortening was not answered 1")
	}
	for _, i := range []int{0, 1} {
		e.toxicOn(1, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	long, at := time.Now(), lengthenAt(clock)
	r, err = s1.updateLeaseAt(x, 2900, at)
	t.Logf("updateLeaseTime(X, 2.9s) at clock T%+dms through replica 1 (A, B cut off) = %s", at-clock, r98Show(r, err))
	if err != nil || r != int64(1) {
		t.Skip("the lengthening was not answered 1")
	}
	time.Sleep(600 * time.Millisecond) // the shortening lands on D, E
	e.clearToxics()
	t.Logf("600ms after the lengthening, X's ms left per backend: %v", r99Left(e, s0.name, x))
	if wait := time.Until(long.Add(1500 * time.Millisecond)); wait > 0 {
		time.Sleep(wait)
	}
	v, err := s0.acquire(1000, y)
	in := time.Since(long)
	t.Logf("Y = %s, %v into X's 2.9s window", r98Show(v, err), in.Round(time.Millisecond))
	if r98Granted(v, err) && in < 2800*time.Millisecond {
		t.Fatalf("a 1-permit semaphore granted Y %v after updateLeaseTime(X, 2.9s) was answered 1 (%s): two holders", in.Round(time.Millisecond), why)
	}
}

// TestReview100LateDelWipesALaterHolder: DEL of a semaphore's name waits
// for the backends up to the node timeout and is answered by a quorum;
// its copies still in flight land later, after a client has set the
// semaphore up again and taken a permit. A 1-permit semaphore. DEL
// through replica 1, whose links to D, E are slow: answered 1 (A, B, C).
// trySetPermits(1) = 1 (A, B, C; D, E still have the old number). X is
// granted (lease 2.9s) by C, D, E (replica 0's links to A, B drop what is
// sent). The DEL's copies then land on D, E: X's slot and the number are
// gone there (the tombstone stops only the repair). A second instance of
// the application runs trySetPermits(1) at start-up (as Redisson
// applications do): 0 (already set), as on one Redis, but D, E now have a
// number and no holder. Y is granted by A, B, D, E inside X's window:
// two holders of one permit. On one Redis: DEL, trySetPermits(1) = 1, X
// granted, trySetPermits(1) = 0, Y refused.
func TestReview100LateDelWipesALaterHolder(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r100:latedel")
	s0.mustTrySet(1)
	_, _ = s1.acquired()                                         // replica 1's links opened
	_, _ = s1.c.Del(context.Background(), "r100:other").Result() // DEL's script loaded on every backend
	for _, i := range []int{3, 4} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":1000}`)
	}
	delSent := time.Now()
	n, err := s1.c.Del(context.Background(), s1.name).Result()
	t.Logf("DEL through replica 1 (D, E slow) = %s; p per backend %v", r98Show(n, err), r99P(e, s0.name))
	if err != nil || n != 1 {
		t.Skip("DEL not answered 1")
	}
	v, err := s0.trySet(1)
	t.Logf("trySetPermits(1) = %s; p per backend %v", r98Show(v, err), r99P(e, s0.name))
	if err != nil || v != int64(1) {
		t.Skip("trySetPermits(1) after the DEL was not answered 1")
	}
	for _, i := range []int{0, 1} {
		e.toxicOn(0, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	x, y := r98ID(), r98ID()
	v, sent, err := s0.acquireAt(context.Background(), 2900, x)
	if !r98Granted(v, err) {
		t.Skipf("X not granted: %s", r98Show(v, err))
	}
	t.Logf("X granted (lease 2.9s):%s", r98Dump(t, e, s0.name))
	time.Sleep(time.Until(delSent.Add(1100 * time.Millisecond))) // the DEL's copies land on D, E
	e.clearToxics()
	waitUsable(t, s0.c.Options().Addr)
	t.Logf("after the DEL's late copies:%s", r98Dump(t, e, s0.name))
	v, err = s0.trySet(1)
	t.Logf("trySetPermits(1) by a second instance = %s (0 on one Redis)", r98Show(v, err))
	v, err = s0.acquire(1000, y)
	at := time.Since(sent)
	t.Logf("Y = %s, %v into X's 2.9s window:%s", r98Show(v, err), at.Round(time.Millisecond), r98Dump(t, e, s0.name))
	if r98Granted(v, err) && at < 2800*time.Millisecond {
		t.Fatalf("a 1-permit semaphore granted Y %v into X's 2.9s window (X granted after the DEL was answered and the semaphore set up again): two holders",
			at.Round(time.Millisecond))
	}
}

// TestReview100TombstoneBlocksRepairAfterTrySet (liveness): a DEL's
// tombstone (a minute) stops the repair of the number on the backends the
// DEL reached, also after a client has set the semaphore up again. A
// 2-permit semaphore is DELeted (all five), then trySetPermits(2) is
// answered 1 while D, E are cut off from both replicas: A, B, C have 2,
// D, E none (and the tombstone), and no read or acquire puts 2 back on D,
// E. C then restarts empty (one backend, waited out of quarantine: what
// helper-98's rolling-restart fix was for): no majority has the number,
// getPermits says 0 and every tryAcquire is refused, though the last
// change, answered, was trySetPermits(2).
func TestReview100TombstoneBlocksRepairAfterTrySet(t *testing.T) {
	sleepBound(t)
	e, s0, _ := r98Replicas(t, "r100:tomb")
	s0.mustTrySet(2)
	if n, err := s0.c.Del(context.Background(), s0.name).Result(); err != nil || n != 1 {
		t.Fatalf("DEL = %v, %v", n, err)
	}
	for _, i := range []int{3, 4} {
		e.toxic(i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	s0.mustTrySet(2)
	e.clearToxics()
	waitUsable(t, s0.c.Options().Addr)
	for range 3 { // reads and acquires: each may repair D, E
		id := r98ID()
		v, err := s0.acquire(1000, id)
		t.Logf("tryAcquire = %s", r98Show(v, err))
		_, _ = s0.release(id)
	}
	time.Sleep(200 * time.Millisecond) // any repair lands
	t.Logf("after trySetPermits(2) with D, E cut off, and three acquires: p per backend %v", r99P(e, s0.name))
	e.redis[2].Restart()
	waitUsable(t, s0.c.Options().Addr)
	total, _ := s0.eval(context.Background(), r98Total, []string{s0.name, s0.timeouts(), s0.channel()}, time.Now().UnixMilli(), "PUBLISH")
	v, err := s0.acquire(1000, r98ID())
	t.Logf("after C restarted: p per backend %v, getPermits = %v, tryAcquire = %s", r99P(e, s0.name), total, r98Show(v, err))
	if !r98Granted(v, err) {
		t.Fatalf("a 2-permit semaphore (trySetPermits(2) answered 1 after the DEL, nothing held) refuses tryAcquire after one backend restarted: %s; getPermits = %v",
			r98Show(v, err), total)
	}
}

// TestReview100HeldEqualStampsShorteningThenLengthening (held): as
// TestReview100ShorteningOvertakesLengtheningClockStepBack, but both
// updates carry the same client clock (two updates in one millisecond):
// the late shortening must not land where the lengthening did.
func TestReview100HeldEqualStampsShorteningThenLengthening(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r100:samestamp")
	s0.mustTrySet(1)
	x, y := r98ID(), r98ID()
	s0.mustAcquire(2000, x)
	_, _ = s1.acquired()
	for _, i := range []int{3, 4} {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":400}`)
	}
	clock := time.Now().UnixMilli()
	if r, err := s0.updateLeaseAt(x, 1000, clock); err != nil || r != int64(1) {
		t.Skipf("the shortening = %s", r98Show(r, err))
	}
	for _, i := range []int{0, 1} {
		e.toxicOn(1, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	long := time.Now()
	if r, err := s1.updateLeaseAt(x, 2900, clock); err != nil || r != int64(1) {
		t.Skipf("the lengthening = %s", r98Show(r, err))
	}
	time.Sleep(600 * time.Millisecond)
	e.clearToxics()
	t.Logf("X's ms left per backend: %v", r99Left(e, s0.name, x))
	tries := 0
	for time.Since(long) < 2700*time.Millisecond {
		tries++
		if v, err := s0.acquire(1000, y); r98Granted(v, err) {
			t.Fatalf("Y granted %v into X's 2.9s window (same stamps)", time.Since(long).Round(time.Millisecond))
		}
		time.Sleep(150 * time.Millisecond)
	}
	t.Logf("%d tries of Y inside X's window, all refused", tries)
}

// TestReview100HeldGhostPinOnlyBlocks (held): a failed tryAcquire(X)
// (replica 0's links to C, D, E 170ms late: past the round's wait) whose
// takes land on C, D, E; before its rollback lands, updateLeaseTime(X,
// 2.9s) through replica 1 is answered 1 and pins X on all five. The
// rollback then frees nothing: X is a ghost permit until its lease ends.
// It must only block: no other id is granted while it lasts, and one is
// granted after.
func TestReview100HeldGhostPinOnlyBlocks(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r100:ghost")
	s0.mustTrySet(1)
	_, _ = s1.acquired()
	x := r98ID()
	for i := 2; i < 5; i++ {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":170}`)
	}
	first := make(chan string, 1)
	go func() {
		v, err := s0.acquire(2900, x)
		first <- r98Show(v, err)
	}()
	time.Sleep(180 * time.Millisecond) // the takes landed on C, D, E; the rollback not yet
	pin := time.Now()
	r, err := s1.updateLease(x, 2900)
	t.Logf("updateLeaseTime(X, 2.9s) through replica 1 = %s; tryAcquire(X) through replica 0 = %s", r98Show(r, err), <-first)
	e.clearToxics()
	time.Sleep(300 * time.Millisecond)
	t.Logf("after the rollback:%s", r98Dump(t, e, s0.name))
	tries, refused := 0, 0
	for time.Since(pin) < 2700*time.Millisecond {
		tries++
		if v, err := s0.acquire(500, r98ID()); r98Granted(v, err) {
			if err == nil && r == int64(1) {
				t.Fatalf("Y granted %v into X's pinned 2.9s lease (updateLeaseTime(X) answered 1)", time.Since(pin).Round(time.Millisecond))
			}
			break
		}
		refused++
		time.Sleep(150 * time.Millisecond)
	}
	t.Logf("%d tries inside X's lease, %d refused", tries, refused)
	time.Sleep(time.Until(pin.Add(3500 * time.Millisecond)))
	if v, err := s0.acquire(500, r98ID()); !r98Granted(v, err) {
		t.Logf("after X's lease: tryAcquire = %s (the ghost outlived its lease?)", r98Show(v, err))
	}
}
