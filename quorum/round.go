package quorum

import (
	"context"
	"time"
)

// lateGrace is how long past a round's deadline the engine still waits for
// a node's late answer before a rollback: a node answers by its own deadline
// plus, at worst, one batch ahead of it in the queue.
func (e *Engine) lateGrace() time.Duration { return e.opts.nodeTimeout + 500*time.Millisecond }

// start sends op to the nodes idx names (nil: all) with a deadline timeout
// from now. With counting, a "yes" counts only from a node out of restart
// quarantine.
func (e *Engine) start(idx []int, op Op, timeout time.Duration, counting bool) *tally {
	if idx == nil {
		idx = e.allIdx
	}
	deadline := time.Now().Add(timeout)
	t := newTally(e.send(idx, op, deadline), len(idx), e.quorum, deadline, e.lateGrace())
	if counting && e.opts.quarantine {
		t.counts = func(j int) bool { return e.health[idx[j]].counts(time.Now(), true) }
		t.hopeless = make([]bool, len(idx))
		for j := range idx {
			t.hopeless[j] = !t.counts(j)
		}
	}
	return t
}

// timedRound is an acquire or extend round: it carries a TTL, so it is
// padded, bounded by the lock timeout, and judged by the validity left.
type timedRound struct {
	*tally
	unlock  func()
	ttl     time.Duration
	start   time.Time
	elapsed time.Duration
}

// startTimed waits for op's (key, value) slot, sends op (an acquire or
// extend) with the padded TTL to every node and collects votes until the
// round is decided.
func (e *Engine) startTimed(ctx context.Context, op Op, ttl time.Duration) (*timedRound, error) {
	if err := e.checkTTL(ttl); err != nil {
		return nil, err
	}
	unlock, err := e.keys.lock(ctx, op.Key, op.Value)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	op.TTL = e.PaddedTTL(ttl)
	t := e.start(nil, op, e.lockTimeout(ttl), true)
	t.collect()
	return &timedRound{tally: t, unlock: unlock, ttl: ttl, start: start, elapsed: time.Since(start)}, nil
}

// verdict grants the round if Q nodes agreed with more than the minimum
// validity left; otherwise it says why not. negative is the reason for a
// quorum of definite "no" votes, and word how each such node is described.
func (e *Engine) verdict(r *timedRound, op string, negative error, word string) (Grant, *RoundError) {
	switch {
	case r.nYes >= e.quorum && r.ttl-r.elapsed > e.opts.minValidity:
		return Grant{Validity: r.ttl - r.elapsed, Votes: r.nYes}, nil
	case r.nYes >= e.quorum:
		rerr := r.roundError(op, ErrValiditySpent, e.nodes, word)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return Grant{}, r.roundError(op, r.failure(negative), e.nodes, word)
}
