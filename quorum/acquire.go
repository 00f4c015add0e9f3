package quorum

import (
	"context"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Grant describes a lock a round obtained or extended.
type Grant struct {
	// Validity is how much of the requested TTL was left when the quorum
	// decided: the caller's window minus the round's duration.
	Validity time.Duration
	// Votes is how many nodes agreed by the time of the decision.
	Votes int
	// Token is the fencing token of a fenced grant (AcquireHash with a token
	// counter): larger than that of every grant before it.
	Token int64
	// ReplyBy is when the caller's window, less the minimum validity, ends
	// (on the monotonic clock, from the request's arrival): a reply that
	// says "granted" must be written before it, or the grant revoked.
	ReplyBy time.Time

	revoke func()
}

// Revoke undoes a grant whose reply could not be written by ReplyBy: an
// acquire is rolled back on every node its round may have written to, once
// its stragglers have answered, removing only that round's writes. It
// returns when the rollback is done. An extend has nothing to undo: a lock
// extended on some nodes only delays other owners until its TTL.
func (g Grant) Revoke() {
	if g.revoke != nil {
		g.revoke()
	}
}

// Acquire sets key to value with ttl on a quorum of nodes (SET NX PX with the
// TTL padded for clock drift). It succeeds only if Q nodes agreed and more
// than the minimum validity is left of ttl.
//
// On failure it removes value from every node where it may have landed, and
// returns only once that rollback finished. The error is a *RoundError whose
// Reason is ErrTaken (held by another value on enough nodes that Q cannot be
// reached), ErrNoQuorum or ErrValiditySpent; or ctx's error if ctx ended while
// waiting for an earlier round of the same (key, value).
func (e *Engine) Acquire(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	id := e.newRoundID()
	r, err := e.startTimed(ctx, Op{Kind: OpSetNX, Key: key, Value: value, Round: id}, ttl)
	if err != nil {
		return Grant{}, err
	}
	undo := Op{Kind: OpUndo, Key: key, Value: value, Round: id}
	g, rerr := e.verdict(r, RoundAcquire)
	if rerr == nil {
		t := r.round
		g.revoke = func() {
			<-t.settled
			e.rollback(undo, t.maybeWrote())
		}
		r.finish(r.unlock)
		return g, nil
	}
	defer r.unlock()
	// Wait for every node, so that nothing still in flight lands after the
	// rollback, and describe the failure with every answer in: the reply
	// names each node and tells "taken" from "sick" on all of them.
	r.drain()
	rerr = e.judgeAgain(r, RoundAcquire, rerr)
	rerr.addNodeErrs(e.rollback(undo, r.maybeWrote()))
	return Grant{}, rerr
}

// rollback undoes an acquire on the given nodes with op (deleting what its
// own round wrote, or giving up one hold of a hash lock) and waits for all
// of them. It owes nothing to the caller's context: it completes even when
// the client that asked is gone. Nodes that answered "taken" are skipped:
// the round wrote nothing there. A failed rollback leaves a key that expires
// with its TTL; it is reported and logged.
func (e *Engine) rollback(op Op, idx []int) *multierror.Error {
	if len(idx) == 0 {
		return nil
	}
	e.rollbacks.Add(1)
	t := e.start(idx, op, e.opts.NodeTimeout, false)
	t.drain()
	var errs *multierror.Error
	for j, v := range t.votes {
		if v != failed && v != skipped {
			continue
		}
		addr := e.nodes[idx[j]].Addr()
		e.rollbackFailures.Add(1)
		attrs := []any{"node", addr, "err", t.errs[j]}
		if e.opts.logValues {
			attrs = append(attrs, "key", op.Key, "value", op.Value)
		}
		e.opts.logger.Warn("rollback failed; the key expires with its TTL", attrs...)
		errs = multierror.Append(errs, &NodeError{Addr: addr, Err: errString("its rollback failed (" + describe(t.errs[j]) + "): the key expires with its TTL")})
	}
	return errs
}
