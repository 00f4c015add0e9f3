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

// newRound returns an id no other round of any engine shares: this
// engine's random prefix and a sequence number.
func (e *Engine) newRound() string {
	return e.roundPrefix + "." + strconv.FormatUint(e.roundSeq.Add(1), 36)
}

func newRoundPrefix(random []byte) string { return hex.EncodeToString(random) }

// lateGrace is how long past a round's deadline the engine still waits for
// a node's late answer before a rollback: a node answers by its own deadline
// plus, at worst, one batch ahead of it in the queue.
func (e *Engine) lateGrace() time.Duration { return e.opts.NodeTimeout + 500*time.Millisecond }

// start sends op to the nodes idx names (nil: all) with a deadline timeout
// from now. With counting, a "yes" counts only from a node out of restart
// quarantine.
func (e *Engine) start(idx []int, op Op, timeout time.Duration, counting bool) *tally {
	if idx == nil {
		idx = e.allIdx
	}
	deadline := time.Now().Add(timeout)
	t := newTally(e.send(idx, op, deadline), len(idx), e.quorum, deadline, e.lateGrace())
	if counting {
		t.counts = func(j int) bool { return e.counts(idx[j], time.Now()) }
		t.why = func(j int) string {
			if why := e.quarantineLeft(idx[j], time.Now()); why != "" {
				return why
			}
			return "quarantined when the round began: it may have lost locks"
		}
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
		return nil, &RoundError{Op: opName(op.Kind), Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum, Spent: spent}
	}
	op.TTL = e.PaddedTTL(ttl)
	op.Pad = op.TTL - ttl
	t := e.start(nil, op, e.lockTimeout(ttl), true)
	t.collect()
	return &timedRound{tally: t, unlock: unlock, ttl: ttl, start: start, elapsed: time.Since(start)}, nil
}

// verdict grants the round if Q nodes agreed with more than the minimum
// validity left; otherwise it says why not. negative is the reason for a
// quorum of definite "no" votes, and word how each such node is described.
func (e *Engine) verdict(r *timedRound, op string, negative error, word string) (Grant, *RoundError) {
	switch {
	case r.nYes >= e.quorum && r.ttl-r.elapsed > e.opts.MinValidity:
		return Grant{Validity: r.ttl - r.elapsed, Votes: r.nYes, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity)}, nil
	case r.nYes >= e.quorum:
		rerr := r.roundError(op, ErrValiditySpent, e.nodes, word)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return Grant{}, r.roundError(op, r.failure(negative), e.nodes, word)
}

// judgeAgain describes a failed round once every answer is in: late answers
// may sharpen the reason (taken rather than sick) and name every node, but a
// round that failed never becomes a grant, however its late votes fall.
func (e *Engine) judgeAgain(r *timedRound, op string, negative error, word string, first *RoundError) *RoundError {
	if first.Reason == ErrValiditySpent {
		return first
	}
	return r.roundError(op, r.failure(negative), e.nodes, word)
}

// opName is how errors name the round an op starts.
func opName(k OpKind) string {
	if k == OpSetNX || k == OpHashAcquire {
		return "acquire"
	}
	return "extend"
}
