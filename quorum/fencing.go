package quorum

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
)

// tendCounters keeps every reachable node's fencing counters intact (see
// fencingdoc.go). A node without the intact marker (it restarted empty,
// or is new) is repaired: each counter is raised to the largest value among
// enough intact other nodes that they share a node with every quorum a
// token was raised on, and the node is then marked. When no node at all is
// marked and a quorum is reachable, this is a new deployment or one wiped
// whole: the nodes are marked with their token counter seeded from the
// wall clock (CounterSeed; see doc.go). One repair runs at a time per engine; engines that
// repair the same node at once do no harm (raises only go up).
func (e *Engine) tendCounters(ctx context.Context) {
	if !e.checkedAll.Load() || !e.repairing.TryLock() {
		return
	}
	defer e.repairing.Unlock()
	var up, intact, unmarked []int
	waiting := 0 // reachable, unmarked, not voting yet
	now := time.Now()
	for i, h := range e.health {
		h.mu.Lock()
		usable, marked := h.up && h.known && h.dupOf == "", h.intact
		tested := h.presentRun == h.runID // this engine's presence tested on its current run (present)
		h.mu.Unlock()
		switch {
		case !usable:
		case marked:
			up, intact = append(up, i), append(intact, i)
		case tested && e.counts(i, now): // only a node out of quarantine, and not lost since this engine last wrote there, may be marked: the marker exempts it
			up, unmarked = append(up, i), append(unmarked, i)
		default:
			up, waiting = append(up, i), waiting+1
		}
	}
	if len(unmarked) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*e.opts.NodeTimeout)
	defer cancel()
	if len(intact) == 0 {
		// A new deployment is marked whole, once every reachable node votes:
		// marking a few first would leave the rest with too few intact
		// nodes to be repaired from.
		if len(up) < e.quorum || waiting > 0 {
			return
		}
		// They may be a deployment wiped whole (all restarted empty):
		// its counters start from the wall clock, above every token
		// given before the wipe (see doc.go).
		seed := CounterSeed(time.Now())
		e.opts.logger.Warn("no backend carries a deployment marker (a new deployment, or every backend lost its data): marking them, fencing counters seeded from the clock", "backends", len(unmarked), "seed", seed)
		for _, i := range unmarked {
			e.repair(ctx, i, map[string]int64{TokenKey: seed})
		}
		return
	}
	if len(intact) < e.recordReaders() {
		e.reseed(ctx, up, unmarked)
		return
	}
	for _, i := range unmarked {
		if merged, read := e.mergedCounters(ctx, intact); read >= e.recordReaders() {
			e.repair(ctx, i, merged)
		}
	}
}

// mergedCounters reads the counters of nodes: each counter's largest
// value, and how many nodes answered. Only counters in the engine's names:
// a counter listed under a client's name (a lock's own, before
// LockCounterKey) is a key clients reach, never copied or written.
func (e *Engine) mergedCounters(ctx context.Context, nodes []int) (merged map[string]int64, read int) {
	merged = map[string]int64{}
	for _, j := range nodes {
		counters, err := e.nodes[j].Counters(ctx)
		if err != nil {
			continue
		}
		read++
		for k, v := range counters {
			if strings.HasPrefix(k, InternalPrefix) {
				merged[k] = max(merged[k], v)
			}
		}
	}
	return merged, read
}

// reseed marks the unmarked nodes that vote when too few nodes are intact
// to copy every counter from (a majority restarted or was flushed; without
// it they would stay unmarked for good, and every replica started later
// would wait a window for them: review110): their counters raised to the
// largest any node that answers has, the shared one also to the clock's
// seed, as after a wipe (Fencing tokens after a total wipe, doc.go). Those
// that lost their counters vote only a window after they lost them, as the
// wipe's argument needs; those that kept them (they fsync every write) carry
// every token a quorum of theirs gave, and raising never lowers one.
func (e *Engine) reseed(ctx context.Context, up, unmarked []int) {
	merged, read := e.mergedCounters(ctx, up)
	if read < e.quorum {
		return
	}
	merged[TokenKey] = max(merged[TokenKey], CounterSeed(time.Now()))
	e.opts.logger.Warn("too few backends carry their deployment marker to repair from: marking the others, fencing counters raised to the clock's seed", "backends", len(unmarked))
	for _, i := range unmarked {
		e.repair(ctx, i, merged)
	}
}

// repair raises node i's counters to counters and marks it intact.
func (e *Engine) repair(ctx context.Context, i int, counters map[string]int64) {
	h := e.health[i]
	h.mu.Lock()
	runID, expect := h.runID, h.marker
	h.mu.Unlock()
	err := e.nodes[i].Repair(ctx, NewMarker(runID), expect, maps.Clone(counters))
	// The marker it carries now (this one, or another replica's that came
	// first): observe compares the next one read with it (a flush). A
	// check read begun before this moment says nothing of a flush.
	info, ierr := e.nodes[i].Info(ctx)
	h.mu.Lock()
	h.repaired = time.Now()
	if err == nil {
		h.intact, h.marked, h.marker = false, true, ""
	}
	if ierr == nil && info.RunID == runID && h.runID == runID {
		h.intact, h.marked, h.marker = info.Intact, info.Marked, info.Marker
		if err == nil && info.Marker == "" { // marked a moment ago, gone: flushed
			h.flushed, h.recorded = time.Now(), false
		}
	}
	h.mu.Unlock()
	if err != nil {
		e.opts.logger.Warn("fencing counter repair failed; retried at the next check", "node", e.nodes[i].Addr(), "err", err)
		return
	}
	if counters != nil {
		e.opts.logger.Info("fencing counters repaired: the backend counts toward tokens again", "node", e.nodes[i].Addr(), "counters", len(counters))
	}
}

// allIntact reports whether every node carries its current run's marker.
func (e *Engine) allIntact() bool {
	for _, h := range e.health {
		if !h.isIntact() {
			return false
		}
	}
	return true
}

// unrepaired names the nodes whose fencing counters do not count, for errors.
func (e *Engine) unrepaired() *multierror.Error {
	var errs *multierror.Error
	for i, h := range e.health {
		if !h.isIntact() && !h.isDown() {
			errs = multierror.Append(errs, &NodeError{Addr: e.nodes[i].Addr(), Err: errString("fencing counters not repaired yet (restarted or new)")})
		}
	}
	return errs
}

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
