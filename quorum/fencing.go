package quorum

import (
	"context"
	"maps"
	"time"

	"github.com/hashicorp/go-multierror"
)

// tendCounters keeps every reachable node's fencing counters intact (see
// Fencing in doc.go). A node without the intact marker (it restarted empty,
// or is new) is repaired: each counter is raised to the largest value among
// enough intact other nodes that they share a node with every quorum a
// token was raised on, and the node is then marked. When no node at all is
// marked and a quorum is reachable, this is a new deployment: the nodes are
// marked as they are. One repair runs at a time per engine; engines that
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
		h.mu.Unlock()
		switch {
		case !usable:
		case marked:
			up, intact = append(up, i), append(intact, i)
		case e.counts(i, now): // only a node out of quarantine may be marked: the marker exempts it
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
		e.opts.logger.Info("no backend carries a deployment marker: marking them as a new deployment (fencing counters start at 0)", "backends", len(unmarked))
		for _, i := range unmarked {
			e.repair(ctx, i, nil)
		}
		return
	}
	if len(intact) < e.recordReaders() {
		return // not enough intact nodes to copy from: tokens wait (NOQUORUM), never go back
	}
	for _, i := range unmarked {
		merged, read := map[string]int64{}, 0
		for _, j := range intact {
			counters, err := e.nodes[j].Counters(ctx)
			if err != nil {
				continue
			}
			read++
			for k, v := range counters {
				merged[k] = max(merged[k], v)
			}
		}
		if read >= e.recordReaders() {
			e.repair(ctx, i, merged)
		}
	}
}

// repair raises node i's counters to counters and marks it intact.
func (e *Engine) repair(ctx context.Context, i int, counters map[string]int64) {
	h := e.health[i]
	h.mu.Lock()
	runID := h.runID
	h.mu.Unlock()
	if err := e.nodes[i].Repair(ctx, runID, maps.Clone(counters)); err != nil {
		e.opts.logger.Warn("fencing counter repair failed; retried at the next check", "node", e.nodes[i].Addr(), "err", err)
		return
	}
	h.mu.Lock()
	h.intact, h.marked = h.runID == runID, true
	h.mu.Unlock()
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

// bootstrap marks every backend of a new deployment at once, on the
// operator's word (WithNewDeployment) that they hold no locks: they then
// count without waiting out the quarantine window. It refuses, and says why,
// unless every configured backend answered, none carries the marker of an
// earlier run (that would be an existing deployment), and every one is
// younger than the window (an older one may hold locks). Backends already
// marked for their current run are left as they are: another replica with
// the same word got there first.
func (e *Engine) bootstrap(ctx context.Context) {
	if e.allIntact() {
		e.opts.logger.Info("initial_cluster_state=new: every backend already carries its current run's deployment marker; nothing to mark")
		return
	}
	window := e.QuarantineWindow()
	var unmarked []int
	for i, h := range e.health {
		h.mu.Lock()
		up, known, marked, intact := h.up, h.known, h.marked, h.intact
		young := time.Since(h.started) < window
		h.mu.Unlock()
		why := ""
		switch {
		case !up || !known:
			why = "it did not answer"
		case marked && !intact:
			why = "it carries the deployment marker of an earlier run: this is an existing deployment"
		case !young:
			why = "it has been up longer than the quarantine window " + window.String() + ", so it may hold locks"
		case intact:
			continue // young and marked for this run: another replica bootstrapping the same deployment
		}
		if why != "" {
			e.opts.logger.Warn("initial_cluster_state=new not applied: backends keep their restart quarantine", "node", e.nodes[i].Addr(), "reason", why)
			return
		}
		unmarked = append(unmarked, i)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*e.opts.NodeTimeout)
	defer cancel()
	for _, i := range unmarked {
		h := e.health[i]
		h.mu.Lock()
		runID := h.runID
		h.mu.Unlock()
		if err := e.nodes[i].Repair(ctx, runID, nil); err != nil {
			e.opts.logger.Warn("initial_cluster_state=new: marking a backend failed; it keeps its restart quarantine", "node", e.nodes[i].Addr(), "err", err)
			continue
		}
		h.mu.Lock()
		h.intact, h.marked, h.since = true, true, time.Time{}
		h.mu.Unlock()
	}
	e.opts.logger.Warn("initial_cluster_state=new: marked the backends of a new deployment; they count at once, without restart quarantine",
		"marked", len(unmarked), "already_marked", len(e.nodes)-len(unmarked))
}

// fence gives a fenced grant its token. The token starts as the largest
// counter among the intact nodes that granted; a quorum of intact nodes is
// then raised to it, and each reports its counter from before: if one was
// already at or above the token (an earlier grant's raise landed there
// after this round's own INCR), the token is that value plus one and the
// raise is repeated. The raise runs after this grant won a quorum, so after
// every earlier grant's raise completed; any two quorums share a node, so
// the token ends above every earlier one. Nodes whose counters are not known
// intact (restarted, not yet repaired) neither give the token nor count.
// The validity left after these steps is checked again. With lock (the
// acquire op of a fenced string lock), the raise also notes the token
// beside the lock, and needs Q nodes that noted it: a read quorum then
// finds it (Token).
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
	// them would not end under load.
	for first, raised := true, false; !raised; first = false {
		var rerr *RoundError
		if raised, rerr = e.raise(r, tokenKey, &g.Token, lock, first); rerr != nil {
			return Grant{}, rerr
		}
	}
	r.elapsed = time.Since(r.start)
	if g.Validity = r.ttl - r.elapsed; g.Validity <= e.opts.MinValidity {
		rerr := r.roundError(RoundAcquire, ErrValiditySpent)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return g, nil
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
	t := e.start(nil, Op{Kind: OpRaise, Key: tokenKey, N: *token, Round: r.id, Aux: lock.Key, Value: lock.Value}, e.lockTimeout(r.ttl), false)
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
