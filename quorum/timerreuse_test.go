package quorum

// Review of 4464a24 (helper-89): one timer per round serves collect,
// drainUntil and the collect nested in drainUntil's timeout case. These check
// that a later wait on the reused timer never ends early (stale fire) nor
// hangs.

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// lateNode answers every Do after after, ignoring the deadline (a node that
// broke its promise, or a late answer on a stalled link); inflight counts
// the answers still to come.
type lateNode struct {
	*fakeNode
	mu       sync.Mutex
	after    time.Duration
	inflight sync.WaitGroup
}

func (l *lateNode) Do(op Op, deadline time.Time, done Done) {
	l.mu.Lock()
	d := l.after
	l.mu.Unlock()
	if d == 0 {
		l.fakeNode.Do(op, deadline, done)
		return
	}
	l.inflight.Go(func() {
		time.Sleep(d)
		done.Done(Reply{OK: true})
	})
}

func lateNodes(n int) ([]*lateNode, []Node) {
	fs, _ := fakes(n)
	ls, ns := make([]*lateNode, n), make([]Node, n)
	for i, f := range fs {
		ls[i] = &lateNode{fakeNode: f}
		ns[i] = ls[i]
	}
	return ls, ns
}

// collect decides early (3 of 5 at once), then drain must wait for the two
// stragglers: the timer collect left stopped must not fire drain early.
func TestReusedTimerDrainAfterEarlyCollect(t *testing.T) {
	ls, ns := lateNodes(5)
	e := newEngine(t, ns, WithNodeTimeout(time.Second))
	for i := 3; i < 5; i++ {
		ls[i].after = 150 * time.Millisecond
	}
	for range 10 {
		r := e.start(nil, Op{Kind: OpSetNX, Key: "k", Value: "v", TTL: time.Minute}, time.Second, false)
		t0 := time.Now()
		r.collect()
		if r.nYes < 3 {
			t.Fatalf("collect: nYes = %d", r.nYes)
		}
		r.drain()
		if r.arrived != 5 || r.nYes != 5 {
			t.Fatalf("drain returned after %v with arrived=%d nYes=%d votes=%v errs=%v", time.Since(t0), r.arrived, r.nYes, r.votes, r.errs)
		}
		if _, err := e.ForceRelease(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
	}
}

// collect times out (its timer fired and was received), then drain must
// still wait for the late answer, up to giveUp.
func TestReusedTimerDrainAfterCollectTimeout(t *testing.T) {
	ls, ns := lateNodes(3)
	e := newEngine(t, ns, WithNodeTimeout(200*time.Millisecond)) // giveUp = deadline + 700ms
	for _, l := range ls {
		l.after = 150 * time.Millisecond
	}
	for range 5 {
		r := e.start(nil, Op{Kind: OpSetNX, Key: "k", Value: "v", TTL: time.Minute}, 30*time.Millisecond, false)
		t0 := time.Now()
		r.collect()
		if r.nFail != 3 || r.errs[0] != context.DeadlineExceeded {
			t.Fatalf("collect: nFail=%d errs=%v (after %v)", r.nFail, r.errs, time.Since(t0))
		}
		r.drain()
		if r.arrived != 3 {
			t.Fatalf("drain ended after %v with arrived=%d: a stale fire or early timer", time.Since(t0), r.arrived)
		}
		if r.nYes != 0 { // votes were fixed by the timeout
			t.Fatalf("late answers counted: nYes=%d", r.nYes)
		}
	}
}

// drainUntil (no collect first) gives up at giveUp: its nested collect
// re-arms the same timer to the (past) deadline and marks pending nodes
// failed; a later drain (finish's) re-arms again and still terminates.
func TestReusedTimerNestedCollect(t *testing.T) {
	ls, ns := lateNodes(3)
	e := newEngine(t, ns, WithNodeTimeout(50*time.Millisecond)) // giveUp = deadline + 550ms
	// The stragglers answer long after giveUp: a drain that waited for them
	// shows in arrived, however slow a loaded machine runs the rest.
	ls[1].after = 3 * time.Second
	ls[2].after = 3 * time.Second
	r := e.start(nil, Op{Kind: OpSetNX, Key: "k2", Value: "v", TTL: time.Minute}, 50*time.Millisecond, false)
	t0 := time.Now()
	r.drainUntil(func() bool { return false })
	if d := time.Since(t0); d < 550*time.Millisecond || r.arrived != 1 {
		t.Fatalf("drainUntil gave up after %v with arrived=%d; want at giveUp (about 600ms), before the stragglers", d, r.arrived)
	}
	if r.votes[1] != failed || r.votes[2] != failed || r.nFail != 2 || r.nYes != 1 {
		t.Fatalf("after give-up: votes=%v nFail=%d nYes=%d", r.votes, r.nFail, r.nYes)
	}
	// A second drain (as finish would): the timer re-armed to a past giveUp
	// fires at once; the nested collect sees a decided round.
	t1 := time.Now()
	r.drain()
	if r.arrived != 1 {
		t.Fatalf("second drain took %v and waited for the stragglers (arrived=%d)", time.Since(t1), r.arrived)
	}
	done := make(chan struct{})
	r.finish(func() { close(done) })
	<-done
	r.settled.Wait()
	for _, l := range ls { // the late answers, before goleak looks
		l.inflight.Wait()
	}
}

// The sequence of fencing's raise: collect (early), drainUntil stopped by
// enough, drain, finish in the background, with the caller reading the
// round only before finish. Run under -race.
func TestReusedTimerSequenceWithBackgroundFinish(t *testing.T) {
	ls, ns := lateNodes(5)
	e := newEngine(t, ns, WithNodeTimeout(time.Second))
	ls[3].after = 40 * time.Millisecond
	ls[4].after = 120 * time.Millisecond
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := e.start(nil, Op{Kind: OpRead, Key: "x"}, time.Second, false)
			r.collect()
			r.drainUntil(func() bool { return r.arrived >= 4 })
			if r.arrived < 4 {
				t.Errorf("%d: drainUntil ended at arrived=%d", i, r.arrived)
			}
			if i%2 == 0 {
				r.drain()
				if r.arrived != 5 {
					t.Errorf("%d: drain ended at arrived=%d", i, r.arrived)
				}
			}
			r.finish(func() {})
			r.settled.Wait()
			if r.arrived != 5 {
				t.Errorf("%d: settled at arrived=%d", i, r.arrived)
			}
		})
	}
	wg.Wait()
}

// collect ends by a deciding answer while its timer has already fired
// unread; drain then re-arms the same timer. With Go >= 1.23 timer channels
// no stale fire is seen; with GODEBUG=asynctimerchan=1 (the pre-1.23
// behaviour a runtime env can restore) drain ends at once, stragglers still
// in flight. Old code (a fresh timer per wait) is immune either way.
// It runs in a child process with GODEBUG=asynctimerchan=1: arm must not
// depend on how the runtime's timers are set (it failed so, 6 of 16, seen).
func TestReusedTimerStaleFireAfterDecidingAnswer(t *testing.T) {
	if os.Getenv("REDLOCK_OLD_TIMERS") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReusedTimerStaleFireAfterDecidingAnswer$", "-test.count=1", "-test.v")
		debug := "asynctimerchan=1"
		if d := os.Getenv("GODEBUG"); d != "" {
			debug = d + "," + debug
		}
		cmd.Env = append(os.Environ(), "REDLOCK_OLD_TIMERS=1", "GODEBUG="+debug)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("with GODEBUG=%s: %v\n%s", debug, err, out)
		}
		return
	}
	ls, ns := lateNodes(3)
	e := newEngine(t, ns, WithNodeTimeout(time.Second))
	waitFor(t, "every node counts", func() bool {
		return e.counts(0, time.Now()) && e.counts(1, time.Now()) && e.counts(2, time.Now())
	})
	ls[0].after, ls[1].after, ls[2].after = 10*time.Millisecond, 30*time.Millisecond, 300*time.Millisecond
	early := 0
	for range 16 {
		r := e.start(nil, Op{Kind: OpSetNX, Key: "k", Value: "v", TTL: time.Minute}, 60*time.Millisecond, true)
		h := e.health[0]
		h.mu.Lock() // node0's add blocks in counts until past the deadline
		done := make(chan struct{})
		go func() { r.collect(); close(done) }()
		time.Sleep(120 * time.Millisecond)
		h.mu.Unlock()
		<-done
		r.drain()
		if r.arrived != 3 {
			early++
		}
		for _, l := range ls { // the straggler, before the next round
			l.inflight.Wait()
		}
	}
	if early > 0 {
		t.Fatalf("drain ended before every answer arrived in %d of 16 rounds (stale timer fire)", early)
	}
}
