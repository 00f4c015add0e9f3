package quorum

import (
	"context"
	"errors"
	"time"
)

// delivery carries the answers of one send's nodes into its channel: a
// slot per node inside it, not a closure per node; a round's own is part
// of the round (start), any other send allocates one.
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

// send queues op on the nodes idx names (nil: all) with one deadline,
// without a goroutine per node. The channel is buffered to the number of
// targets, so a node answering after the round stopped listening never
// blocks. A node known to be down answers errDown at once; a node that
// fails otherwise than by a timeout gets its health checked now.
func (e *Engine) send(idx []int, op Op, deadline time.Time) <-chan answer {
	if idx == nil {
		idx = e.allIdx
	}
	ch := make(chan answer, len(idx))
	e.sendInto(ch, idx, nil, op, deadline)
	return ch
}

// sendInto is send answering into ch, which must have room for every
// answer; node j's answer names pos[j] (nil: j).
func (e *Engine) sendInto(ch chan<- answer, idx, pos []int, op Op, deadline time.Time) {
	e.deliver(new(delivery), ch, idx, pos, op, deadline)
}

// deliver is sendInto through d, which the caller provides (a round's own:
// no allocation of its own) and which lives as long as a node may answer.
func (e *Engine) deliver(d *delivery, ch chan<- answer, idx, pos []int, op Op, deadline time.Time) {
	*d = delivery{e: e, ch: ch, sent: time.Now()}
	if len(idx) <= len(d.inline) {
		d.slots = d.inline[:len(idx)]
	} else {
		d.slots = make([]slot, len(idx))
	}
	for j, i := range idx {
		at := j
		if pos != nil {
			at = pos[j]
		}
		if err := e.health[i].unsendable(); err != nil {
			ch <- answer{node: at, reply: Reply{Err: err}}
			continue
		}
		d.slots[j] = slot{d: d, i: i, at: at}
		e.nodes[i].Do(op, deadline, &d.slots[j])
	}
}
