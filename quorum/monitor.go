package quorum

import (
	"context"
	"errors"
	"sync"
	"time"
)

// watchHealth starts one monitor per node and records what each node says
// when it connects. It runs a first check of every node before returning, so
// the engine knows its backends' ages, records and counters before it serves.
func (e *Engine) watchHealth(ctx context.Context) {
	for i, n := range e.nodes {
		h := &health{nudge: make(chan struct{}, 1)}
		e.health[i] = h
		n.Watch(func(info NodeInfo) { e.learn(i, info, time.Time{}) })
	}
	e.hadQuorum.Store(false) // starting without a quorum is said once, as a warning
	var first sync.WaitGroup
	for i := range e.nodes {
		first.Add(1)
		if !e.monitors.Go(func() { e.monitor(ctx, i, &first) }) {
			first.Done()
		}
	}
	first.Wait()
	e.checkedAll.Store(true)
	e.tendCounters(ctx)
	for i := range e.nodes {
		e.noteVoting(i)
	}
	if !e.noteQuorum() {
		usable := 0
		for _, st := range e.Status() {
			if st.Up && st.Why == "" {
				usable++
			}
		}
		e.opts.logger.Warn("no quorum yet: locks are refused until enough backends can vote (each backend's reason is logged)",
			"usable", usable, "quorum", e.quorum)
	}
}

// noteVoting logs when node i starts or stops counting toward lock quorums
// (a quarantine beginning or ending), once every backend was checked.
func (e *Engine) noteVoting(i int) {
	if !e.checkedAll.Load() {
		return
	}
	h := e.health[i]
	why := e.quarantineLeft(i, time.Now())
	h.mu.Lock()
	was, seen := h.voting, h.votingKnown
	h.voting, h.votingKnown = why == "", true
	h.mu.Unlock()
	switch {
	case seen && was && why != "":
		e.opts.logger.Warn("backend no longer counts toward lock quorums", "node", e.nodes[i].Addr(), "why", why)
	case seen && !was && why == "":
		e.opts.logger.Info("backend counts toward lock quorums again", "node", e.nodes[i].Addr())
	}
}

// learn records what node i said of itself, on a check (read from
// readStart) or a new connection (zero readStart: its marker is not judged).
func (e *Engine) learn(i int, info NodeInfo, readStart time.Time) {
	h, n := e.health[i], e.nodes[i]
	if event := h.observe(info, readStart, time.Now()); event != "" {
		e.opts.logger.Warn(event, "node", n.Addr(), "run_id", info.RunID, "quarantine", e.opts.Quarantine)
		for j := range e.nodes {
			e.nudgeCheck(j) // this engine's record on the new run, and every other's read, soon
		}
	}
	e.raiseWindow(i, info.MaxTTL)
	e.findDuplicates()
}

// findDuplicates marks a node that reports the run_id of another as that
// one's duplicate (one server under two addresses): it would vote twice.
func (e *Engine) findDuplicates() {
	first := map[string]int{}
	for i, h := range e.health {
		h.mu.Lock()
		runID, was := h.runID, h.dupOf
		h.mu.Unlock()
		dup := ""
		if j, seen := first[runID]; seen && runID != "" {
			dup = e.nodes[j].Addr()
		} else if runID != "" {
			first[runID] = i
		}
		if dup == was {
			continue
		}
		h.mu.Lock()
		h.dupOf = dup
		h.mu.Unlock()
		if dup != "" {
			e.opts.logger.Error("two backends are one server (same run_id): the second never votes; list each server once",
				"node", e.nodes[i].Addr(), "same_as", dup, "run_id", runID)
		}
	}
}

// monitor checks node i every health interval, and with backoff while it
// is down, until ctx ends (the engine closed).
func (e *Engine) monitor(ctx context.Context, i int, first *sync.WaitGroup) {
	h, n := e.health[i], e.nodes[i]
	backoff := e.opts.HealthInterval
	for {
		wasUp := h.snapshotUp()
		e.check(ctx, i)
		up := h.snapshotUp()
		if first != nil {
			if !up {
				e.opts.logger.Warn("backend down at start", "node", n.Addr(), "err", h.lastErr())
			}
			first.Done()
			first = nil
			wasUp = up // the first check sets the state; it does not change it
		} else {
			e.tendCounters(ctx)
		}
		switch {
		case up:
			backoff = e.opts.HealthInterval
		case wasUp || backoff == e.opts.HealthInterval || h.timedOut():
			// A check that only ran out of time (a stall of this process
			// or of the backend; nothing refused or broke the connection)
			// is repeated soon rather than backed off for seconds: rounds
			// skip a down node, so only the monitor brings it back. Being
			// up never makes a node vote: its quarantine is judged apart.
			backoff = 100 * time.Millisecond
		default:
			backoff = min(2*backoff, 5*time.Second)
		}
		switch {
		case up && !wasUp:
			e.opts.logger.Info("backend up again", "node", n.Addr())
		case !up && wasUp:
			e.opts.logger.Warn("backend down", "node", n.Addr(), "err", h.lastErr())
		}
		e.noteVoting(i)
		e.noteQuorum() // also catches a quarantine ending
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-h.nudge:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// check reads node i's identity, writes this engine's max-TTL record on it
// and reads the record back, and records the outcome.
func (e *Engine) check(ctx context.Context, i int) {
	h, n := e.health[i], e.nodes[i]
	ictx, cancel := context.WithTimeout(ctx, e.opts.NodeTimeout)
	defer cancel()
	start := time.Now()
	info, err := n.Info(ictx)
	var rerr *ReplyError
	answered := err == nil || errors.As(err, &rerr) // a Redis error reply: up, identity unknown
	recorded := false
	if err == nil {
		e.learn(i, info, start)
		rctx, rcancel := context.WithTimeout(ctx, e.opts.NodeTimeout)
		var record time.Duration
		var prev int64
		seq := e.presenceSeq.Add(1)
		if record, prev, err = n.Record(rctx, e.ownWindow(), e.roundPrefix, seq); err == nil {
			e.raiseWindow(i, record)
			recorded = true
			if h.present(info.RunID, prev, seq, time.Now()) {
				e.opts.logger.Warn("backend lost this replica's presence key, or holds an older one (flushed, its keys deleted, or restored from a copy); quarantined until every lock it could have lost has expired",
					"node", n.Addr(), "run_id", info.RunID, "quarantine", e.opts.Quarantine)
			}
		}
		rcancel()
	}
	h.mu.Lock()
	h.up, h.err, h.checked, h.latency = answered || recorded, err, time.Now(), time.Since(start)
	if recorded && h.runID == info.RunID {
		h.recorded, h.lastOK = true, time.Now()
	}
	h.mu.Unlock()
}

// noteQuorum logs when the usable backends fall below a quorum, or rise to
// one; it is silent until every backend was checked once. It reports
// whether there is a quorum.
func (e *Engine) noteQuorum() bool {
	if !e.checkedAll.Load() {
		return false
	}
	usable := 0
	for _, st := range e.Status() {
		if st.Up && st.Quarantined == 0 && st.DuplicateOf == "" {
			usable++
		}
	}
	has := usable >= e.quorum
	if had := e.hadQuorum.Swap(has); had != has {
		switch {
		case has && e.everHadQuorum.Swap(true):
			e.opts.logger.Info("quorum available again", "usable", usable, "quorum", e.quorum)
		case has:
			e.opts.logger.Info("quorum available", "usable", usable, "quorum", e.quorum)
		default:
			e.opts.logger.Error("quorum lost: locks cannot be granted", "usable", usable, "quorum", e.quorum)
		}
	}
	return has
}
