package quorum

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// health is what the engine knows of one node: reachable or not, which run
// of the backend it is, and whether it is in restart quarantine.
type health struct {
	mu         sync.Mutex
	up         bool
	known      bool // run_id read at least once
	runID      string
	persistent bool
	until      time.Time // end of quarantine
	latency    time.Duration
	err        error
	checked    time.Time
	nudge      chan struct{} // asks the monitor to check now
}

// observe records a node's identity. The first sight of a backend younger
// than window, or a new run_id, starts a quarantine of what is left of
// window, unless the backend fsyncs every write. It returns what changed,
// for the log, or "".
func (h *health) observe(info NodeInfo, now time.Time, window time.Duration) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	event := ""
	switch {
	case info.RunID == "":
		return ""
	case !h.known && info.Uptime < window && !info.Persistent:
		h.until, event = now.Add(window-info.Uptime), "backend started recently; quarantined until every lock it could have lost has expired"
	case h.known && info.RunID != h.runID && !info.Persistent:
		h.until, event = now.Add(window), "backend restarted; quarantined until every lock it could have lost has expired"
	case h.known && info.RunID != h.runID:
		event = "backend restarted; it fsyncs every write, so no quarantine"
	}
	h.known, h.runID, h.persistent = true, info.RunID, info.Persistent
	return event
}

// counts reports whether the node's "yes" may count toward an acquire or
// extend quorum now.
func (h *health) counts(now time.Time, quarantine bool) bool {
	if !quarantine {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.known && (h.persistent || !now.Before(h.until))
}

func (h *health) isDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.up && !h.checked.IsZero()
}

// watchHealth starts one monitor per node and records what each node says
// when it connects. It runs a first check of every node before returning, so
// the engine knows its backends' ages before it serves.
func (e *Engine) watchHealth() {
	window := e.QuarantineWindow()
	for i, n := range e.nodes {
		h := &health{nudge: make(chan struct{}, 1)}
		e.health[i] = h
		n.Watch(func(info NodeInfo) {
			if event := h.observe(info, time.Now(), window); event != "" {
				e.opts.logger.Warn(event, "node", n.Addr(), "run_id", info.RunID, "quarantine", e.opts.quarantine)
			}
		})
	}
	e.hadQuorum.Store(true) // so that starting without one is logged
	var first sync.WaitGroup
	for i := range e.nodes {
		first.Add(1)
		e.monitors.Add(1)
		go e.monitor(i, &first)
	}
	first.Wait()
	e.checkedAll.Store(true)
	e.noteQuorum() // judged once every backend was checked, not after the first one
}

// monitor checks node i every health interval, and with backoff while it
// is down, until the engine closes.
func (e *Engine) monitor(i int, first *sync.WaitGroup) {
	defer e.monitors.Done()
	h, n := e.health[i], e.nodes[i]
	backoff := e.opts.healthInterval
	for {
		wasUp := h.snapshotUp()
		e.check(i)
		up := h.snapshotUp()
		if first != nil {
			if !up {
				e.opts.logger.Warn("backend down at start", "node", n.Addr(), "err", h.lastErr())
			}
			first.Done()
			first = nil
			wasUp = up // the first check sets the state; it does not change it
		}
		switch {
		case up:
			backoff = e.opts.healthInterval
		case wasUp || backoff == e.opts.healthInterval:
			backoff = 100 * time.Millisecond
		default:
			backoff = min(2*backoff, 5*time.Second)
		}
		if up != wasUp {
			e.opts.logger.Warn("backend state changed", "node", n.Addr(), "up", up, "err", h.lastErr())
		}
		e.noteQuorum() // also catches a quarantine ending
		timer := time.NewTimer(backoff)
		select {
		case <-e.stopHealth:
			timer.Stop()
			return
		case <-h.nudge:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// check reads node i's identity once and records the outcome.
func (e *Engine) check(i int) {
	h, n := e.health[i], e.nodes[i]
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.nodeTimeout)
	defer cancel()
	start := time.Now()
	info, err := n.Info(ctx)
	var rerr redis.Error
	answered := err == nil || errors.As(err, &rerr) // a Redis error reply: up, identity unknown
	if err == nil {
		if event := h.observe(info, time.Now(), e.QuarantineWindow()); event != "" {
			e.opts.logger.Warn(event, "node", n.Addr(), "run_id", info.RunID, "quarantine", e.opts.quarantine)
		}
	}
	h.mu.Lock()
	h.up, h.err, h.checked, h.latency = answered, err, time.Now(), time.Since(start)
	h.mu.Unlock()
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

// noteQuorum logs when the usable backends fall below a quorum, or rise to
// one; it is silent until every backend was checked once.
func (e *Engine) noteQuorum() {
	if !e.checkedAll.Load() {
		return
	}
	usable := 0
	for _, st := range e.Status() {
		if st.Up && st.Quarantined == 0 {
			usable++
		}
	}
	has := usable >= e.quorum
	if e.hadQuorum.Swap(has) != has {
		if has {
			e.opts.logger.Info("quorum available again", "usable", usable, "quorum", e.quorum)
		} else {
			e.opts.logger.Error("quorum lost: locks cannot be granted", "usable", usable, "quorum", e.quorum)
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

// QuarantineWindow is how long a restarted backend does not count toward
// an acquire or extend quorum: the longest lock it could have lost,
// max_ttl padded for drift.
func (e *Engine) QuarantineWindow() time.Duration { return e.PaddedTTL(e.opts.maxTTL) }

// NodeStatus is one node's health as the monitor last saw it.
type NodeStatus struct {
	Addr        string
	Up          bool
	RunID       string
	Persistent  bool
	Quarantined time.Duration // how much quarantine is left; 0 when none
	Latency     time.Duration // of the last check
	Err         error         // of the last check
}

// Status reports every node's last known health; it does no I/O.
func (e *Engine) Status() []NodeStatus {
	now := time.Now()
	out := make([]NodeStatus, len(e.nodes))
	for i, h := range e.health {
		h.mu.Lock()
		out[i] = NodeStatus{Addr: e.nodes[i].Addr(), Up: h.up, RunID: h.runID, Persistent: h.persistent, Latency: h.latency, Err: h.err}
		if e.opts.quarantine && !h.persistent && now.Before(h.until) {
			out[i].Quarantined = h.until.Sub(now)
		}
		if e.opts.quarantine && !h.known && h.up {
			out[i].Quarantined = -1 // identity unknown: cannot vote
		}
		h.mu.Unlock()
	}
	return out
}
