package quorum

import (
	"context"
	"time"
)

// Release compare-and-deletes key on every node. It returns nil when Q nodes
// deleted value; a *RoundError with Reason ErrNotHeld when value was missing
// on so many nodes that the caller cannot have held a quorum; ErrNoQuorum when
// too few nodes answered to tell. Deletes still running when it returns
// complete in the background.
func (e *Engine) Release(ctx context.Context, key, value string) error {
	unlock, err := e.keys.lock(ctx, key, value)
	if err != nil {
		return err
	}
	t := e.start(nil, Op{Kind: OpDelIfEq, Key: key, Value: value}, e.opts.NodeTimeout, false)
	t.collect()
	var rerr error
	if t.nYes < e.quorum {
		rerr = t.roundError(RoundRelease, t.failure(RoundRelease))
	}
	t.finish(unlock)
	return rerr
}

// Extend sets the TTL of key to ttl (padded for drift) on every node where it
// holds value. Like Acquire it needs Q agreeing nodes and more than the minimum
// validity left; unlike Acquire it rolls nothing back: a partly extended lock
// only delays other owners until its TTL. Errors as for Release, plus
// ErrValiditySpent.
func (e *Engine) Extend(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	return e.extend(ctx, Op{Kind: OpPExpireIfEq, Key: key, Value: value}, ttl)
}

// Overwrite sets key to value with ttl (padded) on every node where key is
// a lock (a string with a TTL), whoever holds it: SET XX PX, by which
// ShedLock keeps its lock until lockAtLeastFor. Extend's rules; a quorum
// without such a key fails with ErrNotHeld.
func (e *Engine) Overwrite(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	return e.extend(ctx, Op{Kind: OpSetXX, Key: key, Value: value, Round: e.newRoundID()}, ttl)
}

// extend runs an extend round of op with Extend's rules.
func (e *Engine) extend(ctx context.Context, op Op, ttl time.Duration) (Grant, error) {
	r, err := e.startTimed(ctx, op, ttl)
	if err != nil {
		return Grant{}, err
	}
	g, rerr := e.verdict(r, RoundExtend)
	r.finish(r.unlock)
	if rerr != nil {
		return Grant{}, rerr
	}
	return g, nil // nothing to revoke: see Grant.Revoke
}

// ForceRelease deletes key on every node whatever it holds (DEL). It reports
// whether key existed on a quorum. It waits for every node, and fails with
// ErrNoQuorum when fewer than Q answered.
func (e *Engine) ForceRelease(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t := e.start(nil, Op{Kind: OpDel, Key: key}, e.opts.NodeTimeout, false)
	t.drain()
	if t.nYes+t.nNo < e.quorum {
		rerr := t.roundError(RoundDelete, ErrNoQuorum)
		rerr.Votes = t.nYes + t.nNo
		return false, rerr
	}
	return t.nYes >= e.quorum, nil
}
