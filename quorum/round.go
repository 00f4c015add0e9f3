package quorum

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"
)

// A round sends one single-node operation to many nodes at once and counts
// their yes/no answers: start sends, collect waits until the outcome is
// decided, drain until every node answered, finish frees the (key, value)
// slot once the stragglers are in. Acquire and extend rounds (acquire.go)
// judge the votes by the validity left; the others by the votes alone.

// lateGrace is how long past a round's deadline the engine still waits for
// a node's late answer before a rollback: a node answers by its own deadline
// plus, at worst, one batch ahead of it in the queue.
func (e *Engine) lateGrace() time.Duration { return e.opts.NodeTimeout + 500*time.Millisecond }

// start sends op to the nodes idx names (nil: all) with a deadline timeout
// from now. With counting, a "yes" counts only from a node out of restart
// quarantine.
func (e *Engine) start(idx []int, op Op, timeout time.Duration, counting bool) *round {
	if idx == nil {
		idx = e.allIdx
	}
	deadline, n := time.Now().Add(timeout), len(idx)
	t := &round{quorum: e.quorum, deadline: deadline, giveUp: deadline.Add(e.lateGrace()),
		idx: idx, nodes: e.nodes, health: e.health}
	t.settled.Add(1)
	if n <= len(t.inline.votes) { // the usual deployment: one allocation for the round
		t.votes, t.errs, t.replies, t.wasIntact = t.inline.votes[:n:n], t.inline.errs[:n:n], t.inline.replies[:n:n], t.inline.wasIntact[:n:n]
	} else {
		t.votes, t.errs, t.replies, t.wasIntact = make([]vote, n), make([]error, n), make([]Reply, n), make([]bool, n)
	}
	for j, i := range idx { // before the send: a node repaired after it may have run the op on a lost counter
		t.wasIntact[j] = e.health[i].isIntact()
	}
	ch := make(chan answer, n) // buffered for every node: one answering after the round stopped listening never blocks
	e.deliver(&t.d, ch, idx, nil, op, deadline)
	t.ch = ch
	if counting {
		t.e = e
		if n <= len(t.inline.hopeless) {
			t.hopeless = t.inline.hopeless[:n:n]
		} else {
			t.hopeless = make([]bool, n)
		}
		for j := range idx {
			t.hopeless[j] = !t.counts(j)
		}
	}
	return t
}

// counts says whether node j's "yes" may count now (restart quarantine) in a
// counting round.
func (t *round) counts(j int) bool { return t.e.counts(t.idx[j], time.Now()) }

// why says why node j of a counting round could not count.
func (t *round) why(j int) error {
	if why, young := t.e.quarantine(t.idx[j], time.Now()); why != "" {
		return &QuarantineError{Why: why, Young: young}
	}
	return &QuarantineError{Why: "quarantined when the round began: it may have lost locks"}
}

// vote is one node's answer to a yes/no step of a round.
type vote uint8

const (
	pending     vote = iota // not answered yet
	yes                     // did it (set, deleted, extended)
	no                      // definitely did not (key absent or held by another value)
	failed                  // error or timeout: unknown whether it did
	skipped                 // known down: nothing was sent
	quarantined             // did it, but may not count: restarted recently
)

// addr names node i of the round, for errors.
func (t *round) addr(i int) string { return t.nodes[t.idx[i]].Addr() }

// intact reports whether node i of the round has intact counters, and had
// them when the round was sent: a node repaired meanwhile may have answered
// from the counter it lost (its repair came after the op ran there). A
// round may go to a subset of the nodes: its positions are not the
// engine's indexes, so per-node state is looked up through idx, here and
// in addr.
func (t *round) intact(i int) bool { return t.wasIntact[i] && t.health[t.idx[i]].isIntact() }

// round counts the votes of a yes/no round. Votes are fixed when the round
// decides or its deadline passes; answers that come later are still waited
// for (arrived), so nothing in flight outlives a rollback or the owner's slot.
type round struct {
	ch               <-chan answer
	idx              []int     // the engine's index of node i of the round
	nodes            []Node    // the engine's nodes
	health           []*health // the engine's view of them
	votes            []vote
	errs             []error
	replies          []Reply // every answer that arrived, late ones too
	wasIntact        []bool  // per node, its counters were intact when the round was sent (intact)
	quorum           int
	nYes, nNo, nFail int
	arrived          int
	deadline, giveUp time.Time
	// e, when set, makes the round a counting one: a node's "yes" counts
	// only out of restart quarantine (counts, why); hopeless marks nodes that
	// could not count when sent to.
	e        *Engine
	hopeless []bool
	timer    *time.Timer // collect's and drain's, made once
	// settled is done once every node answered (or gave up) after the
	// round was handed to finish: Wait for it (part of the round, no
	// allocation of its own).
	settled sync.WaitGroup
	d       delivery // the nodes' answers come back through it
	// inline backs the per-node slices for up to 7 nodes.
	inline struct {
		votes     [7]vote
		errs      [7]error
		replies   [7]Reply
		hopeless  [7]bool
		wasIntact [7]bool
	}
}

func (t *round) add(a answer) {
	t.arrived++
	t.replies[a.node] = a.reply
	if t.votes[a.node] != pending {
		return // too late to count
	}
	switch {
	case errors.Is(a.reply.Err, errDown):
		t.votes[a.node], t.errs[a.node] = skipped, a.reply.Err
		t.nFail++
	case a.reply.Err != nil:
		t.votes[a.node], t.errs[a.node] = failed, a.reply.Err
		t.nFail++
	case a.reply.OK && t.e != nil && (t.hopeless[a.node] || !t.counts(a.node)):
		// A node that could not count when the round was sent never counts
		// in it: the round was judged without it.
		t.votes[a.node] = quarantined
		t.nFail++
	case a.reply.OK:
		t.votes[a.node] = yes
		t.nYes++
	default:
		t.votes[a.node] = no
		t.nNo++
	}
}

// decided: the outcome can no longer change, either way.
func (t *round) decided() bool {
	open := 0
	for i, v := range t.votes {
		if v == pending && (t.hopeless == nil || !t.hopeless[i]) {
			open++
		}
	}
	return t.nYes >= t.quorum || t.nYes+open < t.quorum
}

// collect reads answers until the round is decided or its deadline passes;
// then nodes that did not answer count as failed.
func (t *round) collect() {
	if t.decided() {
		return
	}
	timer := t.arm(t.deadline)
	defer timer.Stop()
	for !t.decided() {
		select {
		case a := <-t.ch:
			t.add(a)
		case <-timer.C:
			for i, v := range t.votes {
				if v == pending {
					t.votes[i], t.errs[i] = failed, context.DeadlineExceeded
					t.nFail++
				}
			}
			return
		}
	}
}

// arm sets the round's timer to fire at at, making it the first time: one
// timer serves every wait of the round (collect's, then drain's, which runs
// after it). A fire the last wait left unread is dropped first: Go's timers
// keep none since 1.23, but GODEBUG=asynctimerchan=1 brings the old ones
// back, and a stale fire would end a drain before its stragglers answered.
func (t *round) arm(at time.Time) *time.Timer {
	if t.timer == nil {
		t.timer = time.NewTimer(time.Until(at))
		return t.timer
	}
	if !t.timer.Stop() {
		select {
		case <-t.timer.C:
		default:
		}
	}
	t.timer.Reset(time.Until(at))
	return t.timer
}

// drain waits for every node's answer, counting those still countable, so
// that nothing in flight lands after what the caller does next. It gives up
// at lastWait, for a node that broke its promise to answer by its deadline.
func (t *round) drain() { t.drainUntil(func() bool { return false }) }

// drainUntil is drain that stops early once enough says so.
func (t *round) drainUntil(enough func() bool) {
	if t.arrived == len(t.votes) || enough() {
		return
	}
	timer := t.arm(t.giveUp)
	defer timer.Stop()
	for t.arrived < len(t.votes) && !enough() {
		select {
		case a := <-t.ch:
			t.add(a)
		case <-timer.C:
			t.collect() // counts any still pending as failed
			return
		}
	}
}

// finish frees the (key, value) slot once every node of the round answered.
// A round decided early replies at once, but its stragglers keep the slot in
// the background, so no later round of the same owner overlaps them.
func (t *round) finish(unlock func()) {
	if t.arrived == len(t.votes) {
		unlock()
		t.settled.Done()
		return
	}
	go func() {
		t.drain()
		unlock()
		t.settled.Done()
	}()
}

// maybeWrote lists the nodes where the round's write may have landed: not
// those that said no, and not those whose failure shows nothing was sent
// (a refused connection, a node known down, a duplicate).
func (t *round) maybeWrote() []int {
	var idx []int
	for i, v := range t.votes {
		if v == yes || v == quarantined || v == failed && !neverSent(t.errs[i]) {
			idx = append(idx, i)
		}
	}
	return idx
}

// neverSent reports whether a node's error shows the operation never left.
func neverSent(err error) bool {
	var dup *duplicateError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, errDown) || errors.Is(err, ErrClosed) ||
		errors.Is(err, syscall.ENOENT) || errors.As(err, &dup)
}

// answer is one node's reply in a round; node indexes the round's targets.
type answer struct {
	node  int
	reply Reply
}

// timedRound is an acquire or extend round: it carries a TTL, so it is
// padded, bounded by the lock timeout, and judged by the validity left.
type timedRound struct {
	*round
	unlock  func()
	ttl     time.Duration
	start   time.Time // the request's arrival: the caller's window opened then
	elapsed time.Duration
	id      string // the op's round id, when it has one
}

// noted counts the nodes that took a raise and noted its token beside the lock.
func (t *round) noted() int {
	n := 0
	for j, v := range t.votes {
		if v == yes && t.replies[j].Noted {
			n++
		}
	}
	return n
}

// retryIn is the soonest a refused fair acquire may succeed when tried
// again: the shortest wait a node that said no reported.
func (t *round) retryIn() time.Duration {
	var soonest time.Duration
	for i, v := range t.votes {
		if d := time.Duration(t.replies[i].N) * time.Millisecond; v == no && d > 0 && (soonest == 0 || d < soonest) {
			soonest = d
		}
	}
	return soonest
}
