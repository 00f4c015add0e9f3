package quorum

import (
	"time"
)

// fence gives a fenced grant its token. The token starts as the largest
// counter among the intact nodes that granted; a quorum of intact nodes is
// then raised to it, and each reports its counter from before: if one was
// already at or above the token (an earlier grant's raise landed there
// after this round's own INCR), the token is that value plus one and the
// raise is repeated. The raise runs after this grant won a quorum, so after
// every earlier grant's raise completed; any two quorums share a node, so
// the token ends above every earlier one. Nodes whose counters are not known
// intact (restarted, not yet repaired) neither give the token nor count; nor
// do nodes repaired after the round was sent, which may have counted from
// the counter they had lost (round.intact).
// The validity left after these steps is checked again. With lock (the
// acquire op of a fenced string lock), the raise also notes the token
// beside the lock, and needs Q nodes that noted it: a read quorum then
// finds it (Token). The first raise notes its token tentative: a read
// finds no token in it. A grant that was not outbid confirms it final
// (confirm), once it passed its validity check; an outbid grant's second
// raise notes its larger token final. So a read finds only the token of a
// grant's last raise: never an outbid first raise's, nor the first token
// of a grant that failed between its raises (TokenOf waits while holders
// note a tentative token, readNoted).
func (e *Engine) fence(r *timedRound, tokenKey string, g Grant, lock Op) (Grant, *RoundError) {
	intact := 0
	for j, v := range r.votes {
		if v == yes && r.intact(j) {
			g.Token = max(g.Token, r.replies[j].Token)
			intact++
		}
	}
	if intact < e.quorum {
		rerr := r.roundError(RoundAcquire, ErrNoQuorum)
		rerr.addNodeErrs(e.unrepaired())
		rerr.Votes = intact
		return Grant{}, rerr
	}
	// The first raise reads what earlier grants left; a second one, when
	// the token had to move, only makes the new token stick. Counters other
	// grants raise meanwhile belong to grants after this one (or, with the
	// shared TokenKey, of other keys): they need no outbidding, and chasing
	// them would not end under load. A fenced string lock whose Q intact
	// holders counted up to the token itself needs no raise (oneRound).
	one := lock.Key != "" && e.oneRound(r, g.Token)
	raises := 1 // as many as a grant whose first raise was not outbid: it confirms
	if !one {
		raises = 0
		for raised := false; !raised; raises++ {
			var rerr *RoundError
			if raised, rerr = e.raise(r, tokenKey, &g.Token, lock, raises == 0); rerr != nil {
				return Grant{}, rerr
			}
		}
	}
	r.elapsed = time.Since(r.start)
	if g.Validity = r.ttl - r.elapsed; g.Validity <= e.opts.MinValidity {
		rerr := r.roundError(RoundAcquire, ErrValiditySpent)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	if e.fenced.Add(1); !one {
		e.fencedRaised.Add(1)
	}
	if raises == 1 && lock.Key != "" {
		// Not outbid: the first raise's tentative token is the grant's.
		// Confirmed final, unawaited, before the grant is answered: only a
		// token a grant answered is ever confirmed (tokenpart.lua).
		e.confirm(Op{Kind: OpRaise, Key: tokenKey, N: g.Token, Round: r.id, Aux: lock.Key, Value: lock.Value}, r.start.Add(r.ttl))
	}
	return g, nil
}

// oneRound reports whether Q intact nodes granted round r with their
// counter at token (the largest): their acquires noted it beside the lock,
// tentative, in the script that set the lock and counted up to it. Those
// are the Q holders a raise would have given the token to, and no later
// owner is granted on one of them before this lock left it, so after its
// counter reached the token (see fencingdoc.go): the grant's token is
// final once confirmed, with no raise.
func (e *Engine) oneRound(r *timedRound, token int64) bool {
	at := 0
	for j, v := range r.votes {
		if v == yes && r.intact(j) && r.replies[j].Token == token {
			at++
		}
	}
	return at >= e.quorum
}

// raise raises a quorum of intact nodes' counters to *token. With outbid,
// it reports false, with *token moved above every counter another grant
// left at or above it, when the raise must be repeated; an error when too
// few intact nodes took it, or when the caller's window ran out first.
func (e *Engine) raise(r *timedRound, tokenKey string, token *int64, lock Op, outbid bool) (bool, *RoundError) {
	if time.Since(r.start) >= r.ttl-e.opts.MinValidity {
		rerr := r.roundError(RoundAcquire, ErrValiditySpent)
		rerr.Spent = time.Since(r.start)
		return false, rerr
	}
	op := Op{Kind: OpRaise, Key: tokenKey, N: *token, Round: r.id, Aux: lock.Key, Value: lock.Value, Tentative: outbid && lock.Key != ""}
	t := e.start(nil, op, e.lockTimeout(r.ttl), false)
	t.collect()
	noted := t.noted
	if lock.Key != "" { // the notes must reach Q holders too
		t.drainUntil(func() bool { return noted() >= e.quorum })
	}
	raised, above := 0, *token-1
	for j, v := range t.votes {
		if v == yes && t.intact(j) {
			raised++
			if !t.replies[j].Own {
				above = max(above, t.replies[j].N)
			}
		}
	}
	if raised < e.quorum || lock.Key != "" && noted() < e.quorum {
		t.drain()
		rerr := t.roundError(RoundFence, ErrNoQuorum)
		rerr.Votes = raised
		if raised >= e.quorum { // the notes fell short: the lock moved or went on some holders
			rerr.Votes = noted()
		}
		rerr.addNodeErrs(e.unrepaired())
		return false, rerr
	}
	t.finish(func() {})
	if outbid && above >= *token {
		*token = above + 1
		return false, nil
	}
	return true, nil
}

// confirm sends a grant's confirmation of its token (a last raise of the
// token its first raise noted tentative) to every node, unawaited, and up
// to twice more, a node wait apart and within the lock's window, to the
// nodes that failed to answer: a confirmation lost on too many holders
// would leave the lock without a readable token (never with another one).
func (e *Engine) confirm(op Op, until time.Time) {
	if e.life.Err() != nil {
		return // closed
	}
	// The first send is queued now, before the grant is answered: a read
	// this replica sends after the answer finds the token final.
	e.persist(e.allIdx, op, e.send(e.allIdx, op, time.Now().Add(e.opts.NodeTimeout)), resend{tries: 3, until: until})
}
