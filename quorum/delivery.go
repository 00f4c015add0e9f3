package quorum

import (
	"context"
	"errors"
	"time"
)

// delivery carries the answers of one sendInto's nodes into its channel:
// one allocation per call (a slot per node inside it), not a closure per
// node.
type delivery struct {
	e      *Engine
	ch     chan<- answer
	sent   time.Time
	slots  []slot
	inline [7]slot
}

// slot is one node's place in a delivery: engine node i, answering as
// round position at.
type slot struct {
	d     *delivery
	i, at int
}

// Done delivers the node's answer, noting its latency and a failure that
// calls for a health check.
func (s *slot) Done(r Reply) {
	e := s.d.e
	if e.opts.observer != nil {
		e.opts.observer(e.nodes[s.i].Addr(), time.Since(s.d.sent), r.Err)
	}
	if r.Err != nil && !errors.Is(r.Err, context.DeadlineExceeded) {
		var rerr *ReplyError
		if !errors.As(r.Err, &rerr) {
			e.nudgeCheck(s.i)
		}
	}
	s.d.ch <- answer{node: s.at, reply: r}
}
