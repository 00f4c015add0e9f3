package quorum

import (
	"context"
	"time"
)

// timedRound is an acquire or extend round: it carries a TTL, so it is
// padded, bounded by the lock timeout, and judged by the validity left.
type timedRound struct {
	*tally
	ch      <-chan result[bool]
	unlock  func()
	ttl     time.Duration
	elapsed time.Duration
}

// startTimed waits for the (key, value) slot, sends op with the padded TTL to
// every node and collects votes until the round is decided.
func (e *Engine) startTimed(ctx context.Context, key, value string, ttl time.Duration,
	op func(ctx context.Context, n Node, padded time.Duration) (bool, error)) (*timedRound, error) {
	if err := e.checkTTL(ttl); err != nil {
		return nil, err
	}
	unlock, err := e.keys.lock(ctx, key, value)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	padded := e.PaddedTTL(ttl)
	ch := fanOut(ctx, e.nodes, e.lockTimeout(ttl), func(ctx context.Context, n Node) (bool, error) {
		return op(ctx, n, padded)
	})
	t := newTally(len(e.nodes), e.quorum)
	t.collect(ch)
	return &timedRound{tally: t, ch: ch, unlock: unlock, ttl: ttl, elapsed: time.Since(start)}, nil
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
