package quorum

import (
	"context"
	"errors"
)

// ErrNotLatch: DeleteLatch found something else under the latch's name on
// a node (a lock, its note, a fencing counter, a semaphore); deleting it is
// a force release (ForceRelease).
var ErrNotLatch = errors.New("a lock, not an unlock latch")

// DeleteLatch deletes key where it is an unlock latch (OpDelLatch), the
// string a release left so that a retry of that release with the same id
// answers as the first did: Redisson deletes it after each unlock (DEL
// "redisson_unlock_latch:..."), and that one release is over. It is one
// round, answered once a quorum answered: a latch guards nothing but its
// own release's retries, so a copy a node that did not answer keeps (or a
// delete that lands late) changes no lock and no answer but that DEL's,
// and the copy expires with its TTL. existed: a node that answered deleted
// it. ErrNotLatch when a node holds a lock under that name.
func (e *Engine) DeleteLatch(ctx context.Context, key string) (existed bool, err error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t := e.start(nil, Op{Kind: OpDelLatch, Key: key}, e.opts.NodeTimeout, false)
	answered := func() bool { return t.nYes+t.nNo >= e.quorum }
	t.drainUntil(answered)
	for j, v := range t.votes {
		switch {
		case v == no && t.replies[j].N < 0:
			return false, ErrNotLatch
		case v == yes:
			existed = true
		}
	}
	if !answered() {
		rerr := t.roundError(RoundDelete, ErrNoQuorum)
		rerr.Votes = t.nYes + t.nNo
		return false, rerr
	}
	return existed, nil
}
