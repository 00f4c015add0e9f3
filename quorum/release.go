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
