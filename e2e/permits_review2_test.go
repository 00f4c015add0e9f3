package e2e

// helper-99's review of the permit semaphore (commit feac421): each test
// states the promise it checks and fails where the product breaks it.

import (
	"context"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// r99P is each backend's number of permits of semaphore name ("-": none).
func r99P(e *faultEnv, name string) []string {
	out := make([]string, len(e.redis))
	for i, r := range e.redis {
		v, err := r.Client().HGet(context.Background(), quorum.SemaphoreKey(name), "p").Result()
		if err != nil {
			v = "-"
		}
		out[i] = v
	}
	return out
}

// r99Left is id's ms left on each backend (-1: not held there).
func r99Left(e *faultEnv, name, id string) []int64 {
	out := make([]int64, len(e.redis))
	for i, r := range e.redis {
		c := r.Client()
		score, err := c.ZScore(context.Background(), quorum.SemaphoreLeaseKey(name), id).Result()
		if err != nil {
			out[i] = -1
			continue
		}
		now, _ := c.Time(context.Background()).Result()
		out[i] = int64(score) - now.UnixMilli()
	}
	return out
}

// TestReview99ExtendCountsAFailedRoundsNodes: a 1-permit semaphore over
// five backends A-E, two replicas. A client sends tryAcquire(X, lease 1s)
// through replica 0, whose links to C, D, E are slow (170ms), and resends
// the same command 20ms later through replica 1 (helper-98's retry). The
// retry wins C, D, E (X in slot 0, its round beside it) and is granted;
// replica 0's round wrote X on A and B (slot 0, ITS round beside it), and
// fails; its rollback ("undo X round-0") is sent once its late answers
// are in (~170ms later). Before it lands, the holder sends
// updateLeaseTime(X, 2.9s) through replica 1, whose links to D and E
// drop everything: A and B (the failed round's!) and C answer 1 in slot 0
// -- a quorum holding X in one slot -- and the extend is granted. The
// rollback then frees A and B. X's 2.9s window rests on C alone; D and E
// keep the first 1s lease. Once it lapses, Y is granted (A, B, D, E)
// inside X's extended window: two holders of one permit.
func TestReview99ExtendCountsAFailedRoundsNodes(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r99:extundo")
	s1.mustTrySet(1)
	x, y := r98ID(), r98ID()
	first, v, err := r98RaceRetry(e, s0, s1, x, 1000)
	if !r98Granted(v, err) {
		t.Skipf("the retry was not granted: %s", r98Show(v, err))
	}
	t.Logf("the retry through replica 1 = %s", r98Show(v, err))
	for _, i := range []int{3, 4} { // replica 1 cut off from D and E for the extend
		e.toxicOn(1, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	ext := time.Now()
	r, err := s1.updateLease(x, 2900)
	t.Logf("updateLeaseTime(X, 2.9s) through replica 1 (D, E cut off) = %s, %v after the grant", r98Show(r, err), time.Since(ext).Round(time.Millisecond))
	t.Logf("the first try through replica 0 = %s", <-first)
	if err != nil || r != int64(1) {
		t.Logf("the extend was refused: X counts on its first 1s lease")
		return
	}
	time.Sleep(300 * time.Millisecond) // the rollback has landed
	t.Logf("after replica 0's rollback:%s", r98Dump(t, e, s0.name))
	e.clearToxics()
	if wait := time.Until(ext.Add(1200 * time.Millisecond)); wait > 0 {
		time.Sleep(wait) // X's first lease (1s, padded) over on D and E
	}
	v, err = s0.acquire(1000, y)
	at := time.Since(ext)
	t.Logf("Y through replica 0 = %s, %v into X's 2.9s window:%s", r98Show(v, err), at.Round(time.Millisecond), r98Dump(t, e, s0.name))
	if r98Granted(v, err) && at < 2800*time.Millisecond {
		t.Fatalf("a 1-permit semaphore granted Y %v into X's window (updateLeaseTime(X, 2.9s) answered 1): two holders",
			at.Round(time.Millisecond))
	}
}

// TestReview99LateShorteningAfterLengthening: a 1-permit semaphore; X
// holds it (lease 2s). The holder shortens its lease, updateLeaseTime(X,
// 1s), through replica 0, whose links to D and E are slow (400ms): A, B, C
// answer at once and it is answered 1. The holder then lengthens it,
// updateLeaseTime(X, 2.9s), through replica 1, whose links to A and B
// drop everything: C, D, E answer 1 (D and E before the shortening
// reaches them). The shortening's stragglers then land on D and E. X's
// last word, answered 1, is 2.9s, but only C holds it so: A, B, D, E end
// X about 1-1.4s in, and Y is granted inside X's window. (A lengthening
// that lands late only lengthens; a shortening that lands late undoes a
// later grant.)
func TestReview99LateShorteningAfterLengthening(t *testing.T) {
	sleepBound(t)
	r100LateShortening(t, "r99:lateshort", func(int64) int64 { return time.Now().UnixMilli() }, "X's last lease")
}

// TestReview99DelResurrectedByRepair: DEL of a semaphore's name deletes it
// (README). A 3-permit semaphore over A-E; a client DELs it through
// replica 1 while another reads it (getPermits) twice through replica 0,
// the links delayed so that the backends see the DEL and the reads in
// different orders (replica 1's DEL reaches D, E at once, A, B ~60ms in,
// C ~180ms in; replica 0's links to D, E add 30ms). Read 1 finds A, B, C
// with 3 permits and D, E without (DELeted): repairPermits puts 3 back on
// D, E (HSETNX, in the background). Read 2 (100ms in) finds A, B without
// (DELeted), C, D, E with 3: it puts 3 back on A, B. The DEL then reaches
// C and is answered 1. Seen once all has landed: A, B, D, E have 3
// permits -- the semaphore is back. getPermits says 3, trySetPermits(1)
// answers 0, and after addPermits(1) (on one Redis: DEL, then
// trySetPermits(1) = 1, addPermits(1): 2 permits) four ids are granted.
func TestReview99DelResurrectedByRepair(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r99:del")
	s0.mustTrySet(3)
	total := func(s *r98Sem) string {
		v, err := s.eval(context.Background(), r98Total, []string{s.name, s.timeouts(), s.channel()}, time.Now().UnixMilli(), "PUBLISH")
		return r98Show(v, err)
	}
	t.Logf("getPermits through replica 1 = %s (its links to the backends opened)", total(s1))
	for _, i := range []int{0, 1} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":30}`)
	}
	e.toxicOn(1, 2, "slow", "latency", "upstream", 1, `{"latency":90}`) // the DEL is two rounds: ~180ms
	for _, i := range []int{3, 4} {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":30}`)
	}
	start := time.Now()
	del := make(chan string, 1)
	go func() {
		n, err := s1.c.Del(context.Background(), s1.name).Result()
		del <- r98Show(n, err)
	}()
	t.Logf("read 1 = %s", total(s0))
	t.Logf("%v in: p per backend %v", time.Since(start).Round(time.Millisecond), r99P(e, s0.name))
	time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
	t.Logf("%v in: p per backend %v", time.Since(start).Round(time.Millisecond), r99P(e, s0.name))
	t.Logf("read 2 = %s", total(s0))
	t.Logf("%v in: p per backend %v", time.Since(start).Round(time.Millisecond), r99P(e, s0.name))
	t.Logf("DEL = %s", <-del)
	time.Sleep(300 * time.Millisecond)
	e.clearToxics()
	t.Logf("after the DEL's reply: p per backend %v", r99P(e, s0.name))
	got := total(s0)
	ts, tsErr := s0.trySet(1)
	t.Logf("after the DEL: getPermits = %s, trySetPermits(1) = %s", got, r98Show(ts, tsErr))
	if _, err := s0.eval(context.Background(), r98Add, []string{s0.name, s0.channel()}, 1, "PUBLISH"); err != nil {
		t.Logf("addPermits(1): %v", err)
	}
	granted := 0
	for range 4 {
		if v, err := s0.acquire(2500, r98ID()); r98Granted(v, err) {
			granted++
		}
	}
	t.Logf("after DEL, trySetPermits(1), addPermits(1): %d of 4 ids granted:%s", granted, r98Dump(t, e, s0.name))
	if got != "0" || granted > 2 {
		t.Fatalf("DEL answered, then the semaphore is back: getPermits = %s (0 on one Redis), trySetPermits(1) = %s; "+
			"%d ids hold permits of a semaphore DELeted and given 1 or 2 permits since", got, r98Show(ts, tsErr), granted)
	}
}

// TestReview99DelThenGrantInsideHolderWindow: a 1-permit semaphore; X
// holds it (lease 2.9s). The application DELs the semaphore (on one
// Redis nobody gets a permit after that until someone sets permits
// again) while another client polls availablePermits through the other
// replica. The reads' repair puts the number back (as in
// TestReview99DelResurrectedByRepair), and Y is granted the one permit
// inside X's window, though no client set permits after the DEL.
func TestReview99DelThenGrantInsideHolderWindow(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r99:delhold")
	s0.mustTrySet(1)
	x := r98ID()
	granted := time.Now()
	s0.mustAcquire(2900, x)
	_, _ = s1.acquired() // replica 1's links to the backends opened
	for _, i := range []int{0, 1} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":30}`)
	}
	e.toxicOn(1, 2, "slow", "latency", "upstream", 1, `{"latency":90}`) // the DEL is two rounds: ~180ms
	for _, i := range []int{3, 4} {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":30}`)
	}
	avail := func() string {
		v, err := s0.eval(context.Background(), r98Available, []string{s0.name, s0.timeouts(), s0.channel()}, time.Now().UnixMilli(), "PUBLISH")
		return r98Show(v, err)
	}
	start := time.Now()
	del := make(chan string, 1)
	go func() {
		n, err := s1.c.Del(context.Background(), s1.name).Result()
		del <- r98Show(n, err)
	}()
	t.Logf("availablePermits = %s", avail())
	time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
	t.Logf("availablePermits = %s", avail())
	t.Logf("DEL = %s", <-del)
	time.Sleep(300 * time.Millisecond)
	e.clearToxics()
	t.Logf("availablePermits = %s; p per backend %v", avail(), r99P(e, s0.name))
	for time.Since(granted) < 2700*time.Millisecond {
		if v, err := s0.acquire(2000, r98ID()); r98Granted(v, err) {
			t.Fatalf("Y granted %v into X's 2.9s window, after the 1-permit semaphore was DELeted and no client set permits again:%s",
				time.Since(granted).Round(time.Millisecond), r98Dump(t, e, s0.name))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReview101RefusedTrySetPlantsNoNumber (helper-101): a 2-permit
// semaphore; backend 0 restarts empty, and an application instance with
// another config calls trySetPermits(10), answered 0 (a majority has 2).
// It wrote 10 on the restarted backend (HSETNX there), and a rolling
// restart of three backends, each followed by such a call, gave a
// majority 10 though no call set it. Now the call writes nothing where a
// quorum has a number: backend 0 holds 2 (repaired) or none, never 10.
func TestReview101RefusedTrySetPlantsNoNumber(t *testing.T) {
	sleepBound(t)
	e, s, _ := r98Replicas(t, "rev101:plant")
	s.mustTrySet(2)
	e.redis[0].Restart()
	waitUsable(t, s.c.Options().Addr)
	v, err := s.trySet(10)
	if err != nil || v != int64(0) {
		t.Fatalf("trySetPermits(10) with a majority at 2 = %s; want 0", r98Show(v, err))
	}
	time.Sleep(200 * time.Millisecond) // the repair is in the background
	if p, _ := e.redis[0].Client().HGet(context.Background(), quorum.SemaphoreKey(s.name), "p").Result(); p == "10" {
		t.Fatalf("the refused trySetPermits(10) set 10 on the backend that restarted empty")
	}
}
