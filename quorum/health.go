package quorum

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// health is what the engine knows of one node: reachable or not, which run
// of the backend it is, whether it is in restart quarantine, whether its
// fencing counters are intact, and whether it is another node under a
// second name.
type health struct {
	mu          sync.Mutex
	up          bool
	known       bool // run_id read at least once
	runID       string
	persistent  bool
	intact      bool      // carries the marker of its current run: holds everything written since it was marked
	marked      bool      // carries a marker, of this run or an earlier one
	marker      string    // the marker as last read (NodeInfo.Marker)
	flushed     time.Time // when its marker was seen lost or rewritten under the same run (zero: never)
	repaired    time.Time // when this engine's last repair of it ended (marker reads begun before say nothing)
	firstSeen   time.Time // when this engine first read its identity
	recorded    bool      // this engine's max-TTL record is written on this run of the backend
	presentRun  string    // the run on which this engine last wrote its presence (EngineKey), "" never
	presentSeq  int64     // the sequence number it wrote there (0: none)
	since       time.Time // quarantine runs from here for the window (zero: none)
	started     time.Time // when its current run began, by its uptime
	restarted   time.Time // when a new run_id was seen (zero: never)
	dupOf       string    // the address of the node this one is the same server as
	voting      bool      // counted toward lock quorums when last judged (for the log)
	votingKnown bool
	lastOK      time.Time // end of the last successful check
	latency     time.Duration
	err         error
	checked     time.Time
	nudge       chan struct{} // asks the monitor to check now
}

// observe records a node's identity as of now. The first sight of a backend
// starts its quarantine at its start time (none when it carries its current
// run's marker), a new run_id at now, unless the backend fsyncs every
// write. A quarantine once started ends only by this engine's clock: a
// marker that appears later (another replica's, or any write) never ends
// it, as this engine cannot tell who wrote it or whether that writer saw
// the restart. It returns what changed, for the log, or "".
//
// A marker this engine knew that is gone, or (of the current run) written
// anew by a replica of this version, says the backend was flushed (or its
// keys deleted) and may have lost locks: it is quarantined from now for
// the window, whatever its persistence (review105, review106). Only a read
// begun after this engine's last repair of it is judged so (readStart).
func (h *health) observe(info NodeInfo, readStart, now time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	event := ""
	judged := !readStart.IsZero() && !readStart.Before(h.repaired)
	// A read of the same run begun before this engine's last repair ended
	// (or of unknown start: a new connection's) may show the marker from
	// before it: the repair's own reading stands until the next check.
	fresh := !h.known || info.RunID != h.runID || judged
	switch {
	case info.RunID == "":
		return ""
	case !h.known:
		h.firstSeen = now
		if !info.Intact {
			// Not up without a break since it was marked: it may have lost
			// locks when it started (a backend that fsyncs every write too:
			// restored from an older copy of its data, review110).
			h.since = now.Add(-info.Uptime)
		}
	case h.known && info.RunID != h.runID && !info.Persistent:
		h.since, h.restarted, h.recorded = now, now, false
		event = "backend restarted; quarantined until every lock it could have lost has expired"
	case h.known && info.RunID != h.runID && judged && h.marker != "" && info.Marker == "":
		h.flushed, h.recorded = now, false // it kept its data over the restart, but not its marker
		event = "backend restarted without its deployment marker (flushed before); quarantined until every lock it could have lost has expired"
	case h.known && info.RunID != h.runID:
		event = "backend restarted; it fsyncs every write, so no quarantine" // and it kept every record
	case judged && h.marker != "" && markerLost(h.marker, info.Marker, info.RunID):
		h.flushed, h.recorded = now, false
		event = "backend lost its deployment marker (flushed, or its keys deleted); quarantined until every lock it could have lost has expired"
	}
	h.known, h.runID, h.persistent = true, info.RunID, info.Persistent
	if fresh {
		h.intact, h.marked, h.marker = info.Intact, info.Marked, info.Marker
	}
	h.started = now.Add(-info.Uptime)
	return event
}

// present records that this engine's presence (EngineKey) was just set to
// seq on the node, read as run, and the value it had (prev, 0: none). The
// sequence number this engine last wrote there gone (0), or an older one
// (the backend was restored from a copy), on this run or on any run of a
// backend that keeps its data over restarts, says the backend lost keys
// since: quarantined from now for the window, its marker and counters taken
// as lost too (review107, review108: unlike the marker, only this engine
// writes it, so neither another replica's repair nor a read racing this
// engine's own repair hides the loss). A write whose answer was lost left a
// newer number: no loss. It reports whether there was one, for the log.
func (h *health) present(run string, prev, seq int64, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	lost := h.presentSeq > 0 && prev < h.presentSeq && (h.presentRun == run || h.persistent)
	if lost {
		h.flushed, h.recorded = now, false
		h.intact, h.marked, h.marker = false, false, ""
	}
	h.presentRun, h.presentSeq = run, seq
	return lost
}

// markerLost reports whether a backend whose marker was known and now
// reads cur, under the same run, lost it: gone, or a marker of this run
// written anew by a replica of this version (one with a marking id; a
// replica from before markers had one rewrites them as the bare run_id,
// which is no loss: a repair never rewrites a marker of the same run).
func markerLost(known, cur, run string) bool {
	return cur == "" || cur != known && MarkerRun(known) == run && strings.Contains(cur, " ")
}

// counts reports whether node i's "yes" may count toward an acquire or
// extend quorum now: quarantineLeft says why not.
func (e *Engine) counts(i int, now time.Time) bool { return e.quarantineLeft(i, now) == "" }

// quarantineLeft says why node i may not count toward an acquire or extend
// quorum now, and for how long, or "" when it may. A duplicate never
// counts. With quarantine, a node counts once this engine's max-TTL record
// is on it, the quarantine window (the longest padded TTL any engine
// grants, see Engine.QuarantineWindow) has passed since it started unless
// it carries the marker of its current run, a node without that marker has
// waited the window since first seen (it was replaced, flushed, or never
// marked: Bootstrap marks a new deployment), a node seen flushed (its
// marker or this engine's presence gone) has waited the window since, and,
// after a restart, enough of
// the other nodes were read since that the window includes every engine's
// record (see Quarantine in doc.go).
func (e *Engine) quarantineLeft(i int, now time.Time) string {
	why, _ := e.quarantine(i, now)
	return why
}

// quarantine is quarantineLeft, and whether the node is only young: it
// started within the window and was never seen restarting (the mark of a
// brand-new deployment nobody bootstrapped).
func (e *Engine) quarantine(i int, now time.Time) (why string, young bool) {
	h := e.health[i]
	h.mu.Lock()
	dup, known, recorded, persistent, since, restarted := h.dupOf, h.known, h.recorded, h.persistent, h.since, h.restarted
	intact, firstSeen, flushed, marked := h.intact, h.firstSeen, h.flushed, h.marked
	h.mu.Unlock()
	window := e.QuarantineWindow()
	switch {
	case dup != "":
		return "same server as " + dup, false
	case !e.opts.Quarantine:
		return "", false
	case !known:
		return "quarantined until its identity (run_id) is read", false
	case !recorded:
		return "quarantined until this replica's max-TTL record is written on it", false
	case now.Before(flushed.Add(window)):
		return fmt.Sprintf("quarantined for %s more: its deployment marker vanished %s ago (flushed, or its keys deleted), so it may have lost locks",
			flushed.Add(window).Sub(now).Round(time.Second), now.Sub(flushed).Round(time.Second)), false
	case persistent && !marked && now.Before(firstSeen.Add(window)):
		// It keeps its data over restarts, but carries no marker at all:
		// it was flushed, or never marked (review106, review108).
		return fmt.Sprintf("quarantined for %s more: it carries no deployment marker (flushed, or never marked), so it may have lost locks",
			firstSeen.Add(window).Sub(now).Round(time.Second)), false
	case persistent && !intact && restarted.IsZero() && now.Before(since.Add(window)):
		// First seen started within the window, without its run's marker:
		// a normal restart lost nothing, but one from an older copy of its
		// data did, and only a replica that saw it before can tell (review110).
		return fmt.Sprintf("quarantined for %s more: it started %s ago without its run's marker (it fsyncs every write, but may have been restored from an older copy), so it may have lost locks",
			since.Add(window).Sub(now).Round(time.Second), now.Sub(since).Round(time.Second)), true
	case persistent:
		return "", false
	case now.Before(since.Add(window)) && !restarted.IsZero():
		return fmt.Sprintf("quarantined for %s more: it restarted %s ago and may have lost locks (see README, Restart quarantine)",
			since.Add(window).Sub(now).Round(time.Second), now.Sub(since).Round(time.Second)), false
	case now.Before(since.Add(window)):
		return fmt.Sprintf("quarantined for %s more: it started %s ago, within the quarantine window %s, so it may have lost locks",
			since.Add(window).Sub(now).Round(time.Second), now.Sub(since).Round(time.Second), window.Round(time.Second)), true
	case !intact && now.Before(firstSeen.Add(window)):
		// Without its run's marker it may have been flushed, replaced or
		// restarted, even where no backend carries one (every one flushed
		// at once: review108); a new deployment's are marked by Bootstrap.
		return fmt.Sprintf("quarantined for %s more: it lacks its deployment marker (replaced, flushed, or never marked), so it may have lost locks",
			firstSeen.Add(window).Sub(now).Round(time.Second)), false
	case !restarted.IsZero() && e.checkedSince(i, restarted) < e.recordReaders():
		return fmt.Sprintf("quarantined until %d other backends are read after its restart (to learn every replica's max_ttl)", e.recordReaders()), false
	}
	return "", false
}

// mayHaveLostKeys reports whether node i is in restart quarantine because
// it may have lost keys (it started or restarted within the window, lacks
// the marker the others carry, or restarted and the others were not read
// since), the cases of quarantine that say so: its "absent" says nothing of
// a lock written before. A node only waiting for its identity or for its
// max-TTL record has lost nothing known, and a read counts its answers.
func (e *Engine) mayHaveLostKeys(i int, now time.Time) bool {
	if !e.opts.Quarantine {
		return false
	}
	h := e.health[i]
	h.mu.Lock()
	dup, known, persistent, since, restarted := h.dupOf, h.known, h.persistent, h.since, h.restarted
	intact, firstSeen, flushed, marked := h.intact, h.firstSeen, h.flushed, h.marked
	h.mu.Unlock()
	window := e.QuarantineWindow()
	if dup == "" && known && (now.Before(flushed.Add(window)) ||
		persistent && !marked && now.Before(firstSeen.Add(window)) ||
		persistent && !intact && restarted.IsZero() && now.Before(since.Add(window))) {
		return true
	}
	if dup != "" || !known || persistent {
		return false
	}
	switch {
	case now.Before(since.Add(window)):
		return e.quarantineLeft(i, now) != "" // unless its marker vouches for it
	case !intact && now.Before(firstSeen.Add(window)):
		return true
	case !restarted.IsZero() && e.checkedSince(i, restarted) < e.recordReaders():
		return true
	}
	return false
}

// recordReaders is how many other nodes must be read after a node restarts
// before it may count: any N-Q+1 of the other N-1 share a node with every
// quorum that node was part of, so they carry every record that quorum's
// engines wrote.
func (e *Engine) recordReaders() int {
	return min(len(e.nodes)-e.quorum+1, len(e.nodes)-1)
}

// checkedSince counts the nodes other than i checked successfully after t.
func (e *Engine) checkedSince(i int, t time.Time) int {
	n := 0
	for j, h := range e.health {
		if j == i {
			continue
		}
		h.mu.Lock()
		if h.lastOK.After(t) && h.dupOf == "" {
			n++
		}
		h.mu.Unlock()
	}
	return n
}

func (h *health) isDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.up && !h.checked.IsZero()
}

// isIntact reports whether the node's fencing counters count toward tokens.
func (h *health) isIntact() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.intact && h.dupOf == ""
}

// unsendable says why a round sends nothing to the node (known down, or
// a duplicate of another), or nil: one lock on the lock path.
func (h *health) unsendable() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.up && !h.checked.IsZero():
		return errDown
	case h.dupOf != "":
		return &duplicateError{of: h.dupOf}
	}
	return nil
}

// timedOut says whether the last check failed by running out of time only
// (its context, or a read or dial deadline), not by a refusal or a reply.
func (h *health) timedOut() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	var nerr net.Error
	return !h.up && (errors.Is(h.err, context.DeadlineExceeded) || errors.As(h.err, &nerr) && nerr.Timeout())
}

func (h *health) snapshotUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up
}

func (h *health) lastErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// QuarantineWindow is how long a restarted backend does not count toward
// an acquire or extend quorum: the longest lock it could have lost. That is
// the longest padded TTL any engine sharing the backends may grant, with its
// lock-delay: this engine's (ownWindow), or a larger record another engine
// left on a backend. It never shrinks while the engine runs.
func (e *Engine) QuarantineWindow() time.Duration { return time.Duration(e.window.Load()) }

// ownWindow is how long a lock this engine grants may keep others out: its
// max_ttl padded, plus the longer lock-delay (a node that lost a lock's
// delay note must not vote it free before the delay ends).
func (e *Engine) ownWindow() time.Duration {
	return e.PaddedTTL(e.opts.MaxTTL) + max(e.opts.LockDelay, e.opts.NativeLockDelay)
}

// raiseWindow takes a max-TTL record read from node i into the window.
func (e *Engine) raiseWindow(i int, record time.Duration) {
	for {
		cur := e.window.Load()
		if int64(record) <= cur {
			return
		}
		if e.window.CompareAndSwap(cur, int64(record)) {
			e.opts.logger.Warn("another replica grants locks longer than this one's max_ttl; restart quarantine lasts as long as its longest",
				"node", e.nodes[i].Addr(), "quarantine", record.String(), "own", e.ownWindow().String())
			return
		}
	}
}

// nudgeCheck asks node i's monitor to check now, e.g. after a round saw it fail.
func (e *Engine) nudgeCheck(i int) {
	select {
	case e.health[i].nudge <- struct{}{}:
	default:
	}
}
