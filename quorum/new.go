package quorum

import (
	"context"
	"crypto/rand"
	"fmt"
)

// New returns an engine over nodes, which it owns from then on (Close closes them).
func New(nodes []Node, opts ...Option) (*Engine, error) {
	if len(nodes) == 0 {
		return nil, ErrNoNodes
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("quorum: %w", err)
	}
	random := make([]byte, 8)
	_, _ = rand.Read(random)
	e := &Engine{nodes: nodes, quorum: len(nodes)/2 + 1, opts: o, roundPrefix: newRoundPrefix(random),
		allIdx: make([]int, len(nodes)), health: make([]*health, len(nodes))}
	e.window.Store(int64(e.ownWindow()))
	for i := range e.allIdx {
		e.allIdx[i] = i
	}
	ctx, stop := context.WithCancel(context.Background())
	e.life, e.stop = ctx, stop
	e.watchHealth(ctx)
	return e, nil
}

// Close stops the health monitors and the confirmations still retried,
// and closes every node.
func (e *Engine) Close() error {
	e.stop()
	e.monitors.Wait()
	var first error
	for _, n := range e.nodes {
		if err := n.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
