package main

import (
	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

// checkHistory is the whole-history checker (internal/history's Check).
// OK answers that arrive after the window they granted are allowed: a
// replica paused with a request in its socket sends them, and so does this
// process when a loaded machine deschedules it between the reply and the
// reading of it; a late OK opens no window, and any overlap it led to is
// still an anomaly.
func checkHistory(ops []history.Op) history.Result {
	return history.Check(ops, history.Options{AllowLate: true})
}

// late counts the acquires answered OK after their window had ended.
func late(ops []history.Op) int {
	n := 0
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Outcome == history.OK && op.Return > op.Invoke+op.TTL && op.TTL > 0 {
			n++
		}
	}
	return n
}
