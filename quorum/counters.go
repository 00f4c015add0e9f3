package quorum

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Fencing counters kept intact: the health checks' repairs and markings.

// tendCounters keeps every reachable node's fencing counters intact (see
// fencingdoc.go). A node without the intact marker (it restarted empty,
// or is new) is repaired: each counter is raised to the largest value among
// enough intact other nodes that they share a node with every quorum a
// token was raised on, and the node is then marked. When no node at all is
// marked and a quorum is reachable, this is a new deployment or one wiped
// whole; when too few are intact to repair from, a majority lost its data
// (markSeeded): either way the nodes are marked with every counter seeded
// from the wall clock (CounterSeed, see doc.go). One repair runs at a time
// per engine; engines that repair the same node at once do no harm (raises
// only go up).
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
		// given before the wipe (see doc.go). Each node's own counters,
		// lock counters included, are raised to the seed in the script
		// that marks it (the floor): nothing to read first, so a node that
		// stops answering delays no other's marking.
		seed := CounterSeed(time.Now())
		e.opts.logger.Warn("no backend carries a deployment marker (a new deployment, or every backend lost its data): marking them, fencing counters seeded from the clock", "backends", len(unmarked), "seed", seed)
		for _, i := range unmarked {
			e.repair(ctx, i, map[string]int64{TokenKey: seed}, seed)
		}
		return
	}
	if len(intact) < e.recordReaders() {
		e.markSeeded(ctx, up, unmarked)
		return
	}
	for _, i := range unmarked {
		if merged, read := e.mergedCounters(ctx, intact); read >= e.recordReaders() {
			e.repair(ctx, i, merged, 0)
		}
	}
}

// mergedCounters reads the counters of nodes: each counter's largest
// value, and how many nodes answered. Only the engine's own counters
// (engineCounter): a counter listed under a client's name (a lock's own,
// before LockCounterKey, in any database) is a key clients reach, never
// copied or written.
func (e *Engine) mergedCounters(ctx context.Context, nodes []int) (merged map[string]int64, read int) {
	merged = map[string]int64{}
	for _, j := range nodes {
		counters, err := e.nodes[j].Counters(ctx)
		if err != nil {
			continue
		}
		read++
		for k, v := range counters {
			if engineCounter(k) {
				merged[k] = max(merged[k], v)
			}
		}
	}
	return merged, read
}

// engineCounter reports whether counter key is one the engine keeps: the
// shared TokenKey or a lock's own (LockCounterKey).
func engineCounter(key string) bool {
	return key == TokenKey || strings.HasPrefix(key, LockCounterKey(""))
}

// markSeeded marks the unmarked nodes that vote when too few nodes are
// intact to copy every counter from: a majority restarted or was flushed
// (without it they would stay unmarked for good, and every replica started
// later would wait a window for them: review110). (When every node did, a
// wipe or a new deployment, tendCounters marks them with the seed alone.)
// Every counter any answering node has (the
// lock counters that tries made while the nodes were unmarked too:
// review114) is raised to the largest value among them and to the clock's
// seed, as after a wipe (Fencing tokens after a total wipe, doc.go): a lock
// counter a node lacks starts from TokenKey, at least that seed too, and
// one a try made on an unmarked node after the read is raised by the step
// that marks it (Node.Repair's floor). Those
// that lost their counters vote only a window after they lost them, as the
// wipe's argument needs; those that kept them (they fsync every write)
// carry every token a quorum of theirs gave, and raising never lowers one.
func (e *Engine) markSeeded(ctx context.Context, up, unmarked []int) {
	merged, read := e.mergedCounters(ctx, up)
	if read < e.quorum {
		return
	}
	seed := CounterSeed(time.Now())
	e.opts.logger.Warn("too few backends carry their deployment marker to repair from: marking the others, fencing counters raised to the clock's seed", "backends", len(unmarked), "seed", seed)
	for _, i := range unmarked {
		e.repair(ctx, i, merged, seed) // the floor raises each counter to the seed (counterfloor.lua)
	}
}

// repair raises node i's counters to counters and marks it intact; with
// floor, every lock counter it lists at that moment to at least floor too
// (one a try made after the counters were read: review115).
func (e *Engine) repair(ctx context.Context, i int, counters map[string]int64, floor int64) {
	h := e.health[i]
	h.mu.Lock()
	runID, expect := h.runID, h.marker
	h.mu.Unlock()
	err := e.nodes[i].Repair(ctx, NewMarker(runID), expect, maps.Clone(counters), floor)
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
