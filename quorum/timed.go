package quorum

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"
)

type arrivalKey struct{}

// WithArrival returns ctx carrying the moment the caller's request arrived
// (read off the client's socket). Acquire and extend rounds measure the
// validity they leave from it, so time spent queued before the round
// started counts against the caller's window. Without it they measure from
// their own call.
func WithArrival(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, arrivalKey{}, t)
}

func arrival(ctx context.Context) time.Time {
	if t, ok := ctx.Value(arrivalKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}

// newRoundID returns an id no other round of any engine shares: this
// engine's random prefix and a sequence number.
func (e *Engine) newRoundID() string {
	return e.roundPrefix + "." + strconv.FormatUint(e.roundSeq.Add(1), 36)
}

func newRoundPrefix(random []byte) string { return hex.EncodeToString(random) }

// timedRound is an acquire or extend round: it carries a TTL, so it is
// padded, bounded by the lock timeout, and judged by the validity left.
type timedRound struct {
	*round
	unlock  func()
	ttl     time.Duration
	start   time.Time // the request's arrival: the caller's window opened then
	elapsed time.Duration
}

// startTimed waits for op's (key, value) slot, sends op (an acquire or
// extend) with the padded TTL to every node and collects votes until the
// round is decided.
func (e *Engine) startTimed(ctx context.Context, op Op, ttl time.Duration) (*timedRound, error) {
	if err := e.checkTTL(ttl); err != nil {
		return nil, err
	}
	start := arrival(ctx)
	unlock, err := e.keys.lock(ctx, op.Key, op.Value)
	if err != nil {
		return nil, err
	}
	if spent := time.Since(start); ttl-spent <= e.opts.MinValidity {
		// Queued past the caller's window: send nothing (an extend sent now
		// could shorten a lock while its reply says it failed).
		unlock()
		return nil, &RoundError{Op: kindOf(op.Kind), Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum, Spent: spent}
	}
	op.TTL = e.PaddedTTL(ttl)
	op.Pad = op.TTL - ttl
	t := e.start(nil, op, e.lockTimeout(ttl), true)
	t.collect()
	return &timedRound{round: t, unlock: unlock, ttl: ttl, start: start, elapsed: time.Since(start)}, nil
}

// verdict grants the round if Q nodes agreed with more than the minimum
// validity left; otherwise it says why not.
func (e *Engine) verdict(r *timedRound, kind RoundKind) (Grant, *RoundError) {
	switch {
	case r.nYes >= e.quorum && r.ttl-r.elapsed > e.opts.MinValidity:
		return Grant{Validity: r.ttl - r.elapsed, Votes: r.nYes, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity)}, nil
	case r.nYes >= e.quorum:
		rerr := r.roundError(kind, ErrValiditySpent)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return Grant{}, r.roundError(kind, r.failure(kind))
}

// judgeAgain describes a failed round once every answer is in: late answers
// may sharpen the reason (taken rather than sick) and name every node, but a
// round that failed never becomes a grant, however its late votes fall.
func (e *Engine) judgeAgain(r *timedRound, kind RoundKind, first *RoundError) *RoundError {
	if first.Reason == ErrValiditySpent {
		return first
	}
	return r.roundError(kind, r.failure(kind))
}

// kindOf is the kind of round an op starts.
func kindOf(k OpKind) RoundKind {
	if k == OpSetNX || k == OpHashAcquire {
		return RoundAcquire
	}
	return RoundExtend
}
