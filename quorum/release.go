package quorum

import (
	"context"
	"sync"
	"time"
)

// Release compare-and-deletes key on every node. It returns nil when Q nodes
// deleted value; a *RoundError with Reason ErrNotHeld when value was missing
// on so many nodes that the caller cannot have held a quorum; ErrNoQuorum when
// too few nodes answered to tell. Deletes still running when it returns
// complete in the background.
func (e *Engine) Release(ctx context.Context, key, value string) error {
	if err := reservedKey(key); err != nil {
		return err
	}
	_, err := e.release(ctx, Op{Kind: OpDelIfEq, Key: key, Value: value})
	return err
}

// ReleaseFair is Release for a lock that may have waiters (AcquireWaiting):
// it also reports whether a node that deleted it had waiters queued, whom
// the caller should wake.
func (e *Engine) ReleaseFair(ctx context.Context, key, value string) (waiters bool, err error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	return e.release(ctx, Op{Kind: OpDelIfEq, Key: key, Value: value, Fair: true})
}

// ReleaseRound is ReleaseFair for a session lock released because its
// connection closed: it deletes key only where it holds value and its note
// names round, the grant's or re-attach's the connection booked
// (Grant.Round). A lock its holder re-attached through another connection
// (Reattach), or whose pin (PinKey) an extend from another connection left
// open, is left alone; the caller hears ErrNotHeld.
func (e *Engine) ReleaseRound(ctx context.Context, key, value, round string) (waiters bool, err error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	return e.release(ctx, Op{Kind: OpDelIfEq, Key: key, Value: value, Fair: true, Round: round})
}

func (e *Engine) release(ctx context.Context, op Op) (waiters bool, err error) {
	unlock, err := e.keys.lock(ctx, op.Key, op.Value)
	if err != nil {
		return false, err
	}
	op.Mark = e.newRoundID()
	t := e.start(nil, op, e.opts.NodeTimeout, false)
	t.collect()
	if t.nYes < e.quorum {
		// Early decided: wait for the others until enough trusted nodes
		// say "absent" to tell the caller it did not hold the lock.
		t.drainUntil(func() bool { return e.trustedAbsent(t) > len(t.votes)-t.quorum })
		err = t.roundError(RoundRelease, e.releaseFailure(t))
	}
	for i, v := range t.votes {
		waiters = waiters || v == yes && t.replies[i].N == 2
	}
	if err != nil {
		t.finish(unlock) // any lock-delay it marked runs its course
		return waiters, err
	}
	unmarked := e.unmark(t, op)
	t.finish(func() {
		e.unmarkLate(t, op, unmarked)
		unlock()
	})
	return waiters, nil
}

// unmark is a successful release's second step: it removes the marked notes
// (OpUnmark) of the round's nodes that answered "deleted, marked", by now or
// while it waits, so that the lock is free when the release answers. It
// waits for them all, at most a node timeout, or, once Q nodes are free of
// the lock (deleted without a mark, never held it, or unmarked), at most
// unmarkGrace more: a link that stalls after its delete answered delays the
// answer no longer (unmarkLate sends it again). It reports the nodes that
// confirmed.
func (e *Engine) unmark(t *round, op Op) []bool {
	done := make([]bool, len(t.votes))
	var idx, pos []int
	free, out := 0, 0
	for i, r := range t.replies {
		switch {
		case r.Err == nil && r.OK && r.Noted:
			idx, pos = append(idx, t.idx[i]), append(pos, i)
		case r.Err == nil && r.OK, t.votes[i] == no:
			free++
		}
	}
	if len(idx) == 0 {
		return done // the common case, no lock-delay: nothing more to allocate
	}
	uop, deadline := e.unmarkOp(op), time.Now().Add(e.opts.NodeTimeout)
	ch := make(chan answer, len(t.votes))
	e.sendInto(ch, idx, pos, uop, deadline)
	out += len(idx)
	timer := time.NewTimer(e.opts.NodeTimeout)
	defer timer.Stop()
	var grace <-chan time.Time
	enough := func() {
		if grace == nil && free >= e.quorum {
			grace = time.After(unmarkGrace)
		}
	}
	enough()
	for out > 0 {
		select {
		case a := <-ch:
			out--
			if done[a.node] = a.reply.Err == nil; done[a.node] {
				free++
				enough()
			}
		case a := <-t.ch: // a delete's answer after the release decided
			t.add(a)
			switch r := a.reply; {
			case r.Err == nil && r.OK && r.Noted:
				e.sendInto(ch, []int{t.idx[a.node]}, []int{a.node}, uop, deadline)
				out++
			case r.Err == nil:
				free++
				enough()
			}
		case <-grace:
			return done
		case <-timer.C:
			return done
		}
	}
	return done
}

// unmarkGrace is how long a release waits for its last unmarks once Q
// nodes are free of the lock.
const unmarkGrace = 20 * time.Millisecond

// unmarkLate, once the release's stragglers are in, removes in the
// background the marks the release may have left that unmark did not
// remove. A node that answered "marked" but whose unmark failed or was not
// waited for gets it again, further and further apart, for as long as a
// mark may live (the longest lock and delay): a partition that heals frees
// the lock then, not at the mark's end. A node whose delete's answer was
// lost or late (a mark is only possible there) gets it up to three times,
// once more a late grace after the round gave up on it, for a delete a
// stalled link still held. At most maxUnmarking releases do so at once: a
// backend that times out for long, while releases go on, costs no more
// goroutines than that, and marks beyond it live out their TTL (liveness
// only). OpUnmark removes only this release's own mark, so sending it where
// none was left is harmless.
func (e *Engine) unmarkLate(t *round, op Op, done []bool) {
	var marked, unknown []int
	for i, v := range t.votes {
		r := t.replies[i]
		switch {
		case done[i]:
		case r.Err == nil && r.Noted: // marked: answered late, or its unmark failed
			marked = append(marked, t.idx[i])
		case r.Err == nil && r.OK, v == no: // deleted without a mark, or never held it
		case r.Err != nil && neverSent(r.Err), v == failed && neverSent(t.errs[i]): // the delete never left
		default: // no answer, or a lost one: the delete may have landed, marked, or may yet land
			unknown = append(unknown, t.idx[i])
		}
	}
	if len(marked)+len(unknown) == 0 || e.life.Err() != nil {
		return
	}
	uop := e.unmarkOp(op)
	if !e.takeUnmarking() {
		e.send(append(marked, unknown...), uop, time.Now().Add(e.opts.NodeTimeout)) // once, unawaited
		return
	}
	var left sync.WaitGroup
	if len(marked) > 0 {
		r := resend{until: time.Now().Add(e.ownWindow()), grow: true}
		left.Add(1)
		e.persist(marked, uop, e.send(marked, uop, time.Now().Add(e.opts.NodeTimeout)), r, left.Done)
	}
	if len(unknown) > 0 {
		r := resend{tries: 3, until: time.Now().Add(e.ownWindow())}
		left.Add(2)
		e.persist(unknown, uop, e.send(unknown, uop, time.Now().Add(e.opts.NodeTimeout)), r, left.Done)
		if !e.monitors.Go(func() {
			select {
			case <-e.life.Done():
				left.Done()
			case <-time.After(time.Until(t.giveUp.Add(e.lateGrace()))):
				e.persist(unknown, uop, e.send(unknown, uop, time.Now().Add(e.opts.NodeTimeout)), r, left.Done)
			}
		}) {
			left.Done() // the engine closed
		}
	}
	if !e.monitors.Go(func() {
		left.Wait()
		e.unmarking.Add(-1)
	}) {
		e.unmarking.Add(-1) // the engine closed
	}
}

// maxUnmarking bounds the releases whose marks unmarkLate removes at once
// (a variable for tests).
var maxUnmarking int64 = 4096

// takeUnmarking counts one more release unmarking in the background, unless
// maxUnmarking already do: the count never passes the bound, even for a
// moment (an add then an undo let a concurrent reader see one over it: a
// CI run's TestUnmarksAreBoundedAndEndAtClose saw 9 of 8).
func (e *Engine) takeUnmarking() bool {
	for {
		n := e.unmarking.Load()
		if n >= maxUnmarking {
			return false
		}
		if e.unmarking.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (e *Engine) unmarkOp(op Op) Op { return Op{Kind: OpUnmark, Key: op.Key, Value: op.Mark} }

// releaseFailure says why a release that deleted fewer than Q copies failed.
// It is "not held" only when more than N-Q nodes that can vouch for their
// keys said so. A node in restart quarantine lost its keys: its "absent"
// proves nothing, so an owner inside its window whose copies a restart
// thinned below Q hears NOQUORUM, never "not held".
func (e *Engine) releaseFailure(t *round) error {
	if e.trustedAbsent(t) > len(t.votes)-t.quorum {
		return RoundRelease.negative()
	}
	return ErrNoQuorum
}

// trustedAbsent counts the round's "absent" answers from nodes out of
// restart quarantine.
func (e *Engine) trustedAbsent(t *round) int {
	now, n := time.Now(), 0
	for i, v := range t.votes {
		if v == no && e.counts(t.idx[i], now) {
			n++
		}
	}
	return n
}
