package quorum

import "time"

// NodeStatus is one node's health as the monitor last saw it.
type NodeStatus struct {
	Addr        string
	Up          bool
	RunID       string
	Persistent  bool
	Quarantined time.Duration // how much quarantine is left; 0 when none, -1 when it waits on something else
	Latency     time.Duration // of the last check
	Err         error         // of the last check
	Intact      bool          // its fencing counters count toward tokens
	DuplicateOf string        // the node it is the same server as: it never votes
	Why         string        // why it may not vote now, and for how long; "" when it may
}

// Status reports every node's last known health; it does no I/O.
func (e *Engine) Status() []NodeStatus {
	now := time.Now()
	out := make([]NodeStatus, len(e.nodes))
	for i, h := range e.health {
		h.mu.Lock()
		out[i] = NodeStatus{Addr: e.nodes[i].Addr(), Up: h.up, RunID: h.runID, Persistent: h.persistent, Latency: h.latency,
			Err: h.err, Intact: h.intact, DuplicateOf: h.dupOf}
		since, persistent, known, flushed := h.since, h.persistent, h.known, h.flushed
		h.mu.Unlock()
		if !e.opts.Quarantine || out[i].DuplicateOf != "" {
			continue
		}
		window := e.QuarantineWindow()
		if end := flushed.Add(window); now.Before(end) {
			out[i].Quarantined = end.Sub(now)
		} else if end := since.Add(window); !persistent && now.Before(end) {
			out[i].Quarantined = end.Sub(now)
		} else if out[i].Up && (!known || !e.counts(i, now)) {
			out[i].Quarantined = -1 // identity, record, marker or others' records pending
		}
		out[i].Why = e.quarantineLeft(i, now)
	}
	return out
}
