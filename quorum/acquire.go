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
	r, err := e.startTimed(ctx, Op{Kind: OpSetNX, Key: key, Value: value}, ttl)
	if err != nil {
		return Grant{}, err
	}
	if g, rerr := e.verdict(r, "acquire", ErrTaken, "taken"); rerr == nil {
		r.finish(r.unlock)
		return g, nil
	}
	defer r.unlock()
	// Wait for every node, so that nothing still in flight lands after the
	// rollback, and judge again with every vote in: the reply names each
	// node's answer and tells "taken" from "sick" on all of them.
	r.drain()
	_, rerr := e.verdict(r, "acquire", ErrTaken, "taken")
	if rb := e.rollback(Op{Kind: OpDelIfEq, Key: key, Value: value}, r.maybeWrote()); rb != nil {
		if rerr.NodeErrs == nil {
			rerr.NodeErrs = &multierror.Error{ErrorFormat: oneLine}
		}
		rerr.NodeErrs.Errors = append(rerr.NodeErrs.Errors, rb.Errors...)
	}
	return Grant{}, rerr
}

// rollback undoes an acquire on the given nodes with op (a compare-and-delete,
// or giving up one hold of a hash lock) and waits for all of them. It owes nothing to the caller's context: it completes even when the
// client that asked is gone. Nodes that answered "taken" are skipped: the
// round wrote nothing there, and what is there may be this owner's earlier
// lock. A failed rollback leaves a key that expires with its TTL; it is
// reported and logged.
func (e *Engine) rollback(op Op, idx []int) *multierror.Error {
	if len(idx) == 0 {
		return nil
	}
	e.rollbacks.Add(1)
	t := e.start(idx, op, e.opts.nodeTimeout, false)
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
		errs = multierror.Append(errs, &NodeError{Addr: addr, Err: errString("rollback failed: " + describe(t.errs[j]))})
	}
	return errs
}
