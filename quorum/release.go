package quorum

import (
	"context"
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

func (e *Engine) release(ctx context.Context, op Op) (waiters bool, err error) {
	unlock, err := e.keys.lock(ctx, op.Key, op.Value)
	if err != nil {
		return false, err
	}
	t := e.start(nil, op, e.opts.NodeTimeout, false)
	t.collect()
	if t.nYes < e.quorum {
		err = t.roundError(RoundRelease, t.failure(RoundRelease))
	}
	for i, v := range t.votes {
		waiters = waiters || v == yes && t.replies[i].N == 2
	}
	t.finish(unlock)
	return waiters, err
}

// ForceRelease deletes key on every node whatever it holds (DEL). It reports
// whether key existed on a quorum. It waits for every node, and fails with
// ErrNoQuorum when fewer than Q answered.
func (e *Engine) ForceRelease(ctx context.Context, key string) (bool, error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
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
