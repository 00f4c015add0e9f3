package quorum

import (
	"context"
	"errors"
)

// Unreattach moves a re-attach's lock back to the round it moved it from
// (g, a grant of Reattach): its caller did not see the re-attach succeed
// (the client hung up before the reply went out, or the reply was an
// error), so the client may rely on the connection that booked the lock
// before, on this replica or another, and the re-attaching one books
// nothing. Each node that still names g's round names again the round
// g's re-attach replaced there (the node keeps each re-attach's replaced
// round, PriorKey; g.Prior, the round it read, where it no longer does);
// a node a later re-attach moved keeps that one's round, and g's round
// leaves the node's chain, so that the later one, moved back too, names
// what g's replaced: never a round no connection books. The lock's value, token, TTL and
// lock-delay stay as they are: the lock is its owner's either way, and a
// longer TTL only delays other owners.
//
// It waits for the re-attaches of the lock through this engine (one at a
// time, as Reattach) and for every node (each bounded by the node timeout);
// it reports how many nodes moved back. A node that answered the re-attach
// but not this (a fault) keeps naming g's round, which nobody renews: with
// too many of those the lock expires with its TTL, as when its holder's
// replica dies.
func (e *Engine) Unreattach(ctx context.Context, key, value string, g Grant) (int, error) {
	if !g.Moved() || g.Prior == "" {
		return 0, errors.New("not a re-attach's grant")
	}
	unlock, err := e.reattaching.lock(ctx, key, value)
	if err != nil {
		return 0, err
	}
	defer unlock()
	t := e.start(nil, Op{Kind: OpUnreattach, Key: key, Value: value, Round: g.Round, IfEq: g.Prior}, e.opts.NodeTimeout, false)
	t.drain()
	n := 0
	for _, v := range t.votes {
		if v == yes {
			n++
		}
	}
	return n, nil
}
