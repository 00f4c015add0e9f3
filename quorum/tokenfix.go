package quorum

import (
	"context"
	"time"
)

// A lock taken without a token (Acquire: SET NX PX, a client library's
// script) gets one when its token is first read (TokenOf), so existing
// code can adopt fencing one reader at a time and plain acquires pay
// nothing for it. The backends decide which token, not one reader: a
// reader draws a candidate, one more than the largest counter among Q
// intact nodes (TokenKey), and sends it to every node (OpFixToken), which
// raises its counter to it and fixes it beside the lock where the lock is
// held and no token is fixed yet (set if absent: a node's fixed token
// never changes while the lock lives). Each node answers the token fixed
// there now. The token fixed on Q holders is the lock's; at most one can
// be, since two sets of Q holders share a node. A reader answers it
// whether it drew it or another reader did, and answers nothing of its
// own: when no token has Q holders (a split among readers while nodes
// are down), it refuses (ErrNoQuorum) and a later read settles it on the
// holders left.
//
// A token is answered only if Q holders were seen to fix it before the
// earliest moment the lock can expire on one of its holders: a later
// owner of the key is granted only after that (a quorum without the lock
// shares a node with the lock's holders), and each of those holders had
// its counter raised to the token in the same script that fixed it, so
// the later owner's token, fixed the same way or drawn by a fenced
// acquire from those counters, is larger. A fix that would end after that
// moment is refused (ErrValiditySpent). A fenced lock (AcquireFenced) is
// never fixed: its acquire noted it as fenced, and its own raise gives its
// token (before that, TokenOf reads it without one).

// TokenOf reads key's lock by quorum with its fencing token, fixing one
// for a lock that has none. Found is false when no value holds Q nodes.
func (e *Engine) TokenOf(ctx context.Context, key string) (Entry, error) {
	if err := reservedKey(key); err != nil {
		return Entry{}, err
	}
	v, start, err := e.readNoted(ctx, key)
	if err == nil && v.Token > 0 && v.Note == NoteFixed {
		return v, e.fixedInTime(v, start)
	}
	if err != nil || !v.Found || v.Token > 0 || v.Note == NoteFenced || v.Type != TypeString || v.TTL < 0 {
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
	if again, readAgain, err := e.readNoted(ctx, key); err != nil || again.Token > 0 ||
		again.Note == NoteFenced || !again.Found || again.Value != v.Value {
		if err == nil && again.Token > 0 && again.Note == NoteFixed {
			err = e.fixedInTime(again, readAgain)
		}
		return again, err // fixed meanwhile, or gone
	}
	token, err := e.fixToken(v, key, expires)
	if err != nil {
		return Entry{}, err
	}
	v.Token, v.Note = token, NoteFixed
	return v, nil
}

// fixedInTime vouches for a fixed token a read found on Q holders (read
// from start): only if the read ended while Q holders still held the lock
// (v.TTL, the Q-th longest less drift, from start). The fixes it saw then
// landed before any later owner could be granted, as a fixer's must.
func (e *Engine) fixedInTime(v Entry, start time.Time) error {
	if time.Now().Before(start.Add(v.TTL)) {
		return nil
	}
	return &RoundError{Op: RoundFence, Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum, Spent: time.Since(start)}
}

// fixToken proposes a token for lock v of key and answers the one Q
// holders fixed by deadline, this reader's or another's.
func (e *Engine) fixToken(v Entry, key string, deadline time.Time) (int64, error) {
	began := time.Now()
	spent := func(t *round) *RoundError { // t still this goroutine's: before its finish
		rerr := t.roundError(RoundFence, ErrValiditySpent)
		rerr.Spent = time.Since(began)
		return rerr
	}
	timeout := min(e.opts.NodeTimeout, time.Until(deadline))
	if timeout <= 0 {
		return 0, &RoundError{Op: RoundFence, Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum}
	}
	// Read the counters, and the tokens readers before this one fixed
	// beside the lock (N 0 writes nothing).
	read := Op{Kind: OpFixToken, Key: TokenKey, Round: v.Round, Aux: key, Value: v.Value}
	t := e.start(nil, read, timeout, false)
	t.drainUntil(func() bool { return e.intactYes(t) >= e.quorum })
	if e.intactYes(t) < e.quorum {
		rerr := t.roundError(RoundFence, ErrNoQuorum)
		rerr.addNodeErrs(e.unrepaired())
		t.finish(func() {})
		return 0, rerr
	}
	var token int64
	for j, vote := range t.votes {
		if vote == yes && t.intact(j) {
			token = max(token, t.replies[j].N)
		}
	}
	token++
	// A token some holders fixed already is proposed again (the most
	// fixed among those that answered, the larger of a tie), so that
	// readers converge on one rather than split the holders left; it was
	// drawn above every token before this lock, as a fresh one is.
	if lead, _ := leading(t); lead > 0 {
		token = lead
	}
	// Propose it: each node raises its counter and answers the token fixed
	// beside the lock there, this one unless another reader's came first.
	timeout = min(e.opts.NodeTimeout, time.Until(deadline))
	if timeout <= 0 {
		rerr := spent(t) // described before finish hands t to the goroutine that drains it
		t.finish(func() {})
		return 0, rerr
	}
	t.finish(func() {})
	read.N = token
	r := e.start(nil, read, timeout, false)
	fixed := func() (int64, int) {
		if lead, n := leading(r); n >= e.quorum {
			return lead, n
		}
		return 0, 0
	}
	r.drainUntil(func() bool { _, n := fixed(); return n > 0 })
	defer r.finish(func() {})
	won, _ := fixed()
	switch {
	case won == 0:
		rerr := r.roundError(RoundFence, ErrNoQuorum)
		rerr.addNodeErrs(e.unrepaired())
		return 0, rerr
	case !time.Now().Before(deadline):
		return 0, spent(r)
	}
	return won, nil
}

// leading is the token fixed beside the lock on the most nodes of t (the
// larger of a tie), and on how many; 0 when none is.
func leading(t *round) (int64, int) {
	counts := make(map[int64]int, 2)
	var lead int64
	for j, vote := range t.votes {
		if tok := t.replies[j].Token; vote == yes && tok > 0 {
			counts[tok]++
			if c, l := counts[tok], counts[lead]; c > l || c == l && tok > lead {
				lead = tok
			}
		}
	}
	return lead, counts[lead]
}

// intactYes counts the nodes of t that answered yes and whose counters are
// intact.
func (e *Engine) intactYes(t *round) int {
	n := 0
	for j, v := range t.votes {
		if v == yes && t.intact(j) {
			n++
		}
	}
	return n
}
