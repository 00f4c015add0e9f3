package quorum

import (
	"context"
	"time"
)

// A lock taken without a token (Acquire: SET NX PX, a client library's
// script) gets one when its token is first read (TokenOf), so existing
// code can adopt fencing one reader at a time and plain acquires pay
// nothing for it. The token is one more than the largest counter among Q
// intact nodes (TokenKey), raised on Q intact nodes and noted beside the
// lock on Q holders, all before the earliest moment the lock can expire on
// one of its holders: a later owner of the key is granted only after that
// (a quorum without the lock shares a node with the lock's holders), so its
// token, fixed the same way or drawn by a fenced acquire from counters
// raised past this one, is larger. A fix that would end after that moment
// is refused (ErrValiditySpent): the token answered is never one a later
// owner could undercut.

// TokenOf reads key's lock by quorum with its fencing token, fixing one
// for a lock that has none. Found is false when no value holds Q nodes.
func (e *Engine) TokenOf(ctx context.Context, key string) (Entry, error) {
	if err := reservedKey(key); err != nil {
		return Entry{}, err
	}
	start := time.Now()
	v, err := e.read(ctx, Op{Kind: OpRead, Key: key, Aux: MetaKey(key)}, false, false)
	if err != nil || !v.Found || v.Token > 0 || v.Type != TypeString || v.TTL < 0 {
		return v, err
	}
	// v.TTL is the Q-th longest TTL among the holders less the drift
	// allowance; the holder that expires first bounds the fix.
	expires := start.Add(v.TTL)
	unlock, err := e.keys.lock(ctx, key, v.Value) // one fix at a time for this lock, here
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	if again, err := e.read(ctx, Op{Kind: OpRead, Key: key, Aux: MetaKey(key)}, false, false); err != nil || again.Token > 0 ||
		!again.Found || again.Value != v.Value {
		return again, err // fixed meanwhile, or gone
	}
	token, err := e.fixToken(v, key, expires)
	if err != nil {
		return Entry{}, err
	}
	v.Token = token
	return v, nil
}

// fixToken draws a token for lock v of key and notes it on Q holders by
// deadline.
func (e *Engine) fixToken(v Entry, key string, deadline time.Time) (int64, error) {
	spent := func(t *round) *RoundError {
		rerr := t.roundError(RoundFence, ErrValiditySpent)
		rerr.Spent = time.Until(deadline)
		return rerr
	}
	timeout := min(e.opts.NodeTimeout, time.Until(deadline))
	if timeout <= 0 {
		return 0, &RoundError{Op: RoundFence, Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum}
	}
	// Read the counters (a raise to 0 writes nothing).
	t := e.start(nil, Op{Kind: OpRaise, Key: TokenKey}, timeout, false)
	t.drainUntil(func() bool { return e.intactYes(t) >= e.quorum })
	if e.intactYes(t) < e.quorum {
		rerr := t.roundError(RoundFence, ErrNoQuorum)
		rerr.addNodeErrs(e.unrepaired())
		t.finish(func() {})
		return 0, rerr
	}
	var token int64
	for j, vote := range t.votes {
		if vote == yes && e.health[t.idx[j]].isIntact() {
			token = max(token, t.replies[j].N)
		}
	}
	token++
	t.finish(func() {})
	// Raise, noting the token beside the lock where v's round wrote it.
	timeout = min(e.opts.NodeTimeout, time.Until(deadline))
	if timeout <= 0 {
		return 0, spent(t)
	}
	r := e.start(nil, Op{Kind: OpRaise, Key: TokenKey, N: token, Round: v.Round, Aux: key, Value: v.Value}, timeout, false)
	noted := r.noted
	r.drainUntil(func() bool { return e.intactYes(r) >= e.quorum && noted() >= e.quorum })
	defer r.finish(func() {})
	switch {
	case e.intactYes(r) < e.quorum || noted() < e.quorum:
		rerr := r.roundError(RoundFence, ErrNoQuorum)
		rerr.addNodeErrs(e.unrepaired())
		return 0, rerr
	case !time.Now().Before(deadline):
		return 0, spent(r)
	}
	return token, nil
}

// intactYes counts the nodes of t that answered yes and whose counters are
// intact.
func (e *Engine) intactYes(t *round) int {
	n := 0
	for j, v := range t.votes {
		if v == yes && e.health[t.idx[j]].isIntact() {
			n++
		}
	}
	return n
}
