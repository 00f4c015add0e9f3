package quorum

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Get returns the value key holds on a quorum of nodes; Found is false when
// no value is held by Q nodes. It decides as soon as Q nodes agree, so its
// TTL is only a lower bound: use Read for the TTL. When too many nodes fail
// to answer to tell, it returns a *RoundError with Reason ErrNoQuorum.
func (e *Engine) Get(ctx context.Context, key string) (Entry, error) {
	return e.read(ctx, key, true)
}

// Read is Get with a conservative remaining TTL: the Q-th largest TTL among
// the nodes that hold the majority value (when that one expires, fewer than
// Q hold it) minus the drift allowance. It waits for every node (each bounded
// by the node timeout), so that a lock just extended on a quorum reads as
// extended even while the extension still reaches the other nodes.
//
// A TTL whose conservative remainder is not positive reads as not found: the
// window a client could have been given is over. A key without expiry reads
// with a negative TTL.
func (e *Engine) Read(ctx context.Context, key string) (Entry, error) {
	return e.read(ctx, key, false)
}

func (e *Engine) read(ctx context.Context, key string, early bool) (Entry, error) {
	ch := fanOut(ctx, e.nodes, e.opts.nodeTimeout, func(ctx context.Context, n Node) (Entry, error) {
		return n.Read(ctx, key)
	})
	var (
		answers = make([]result[Entry], 0, len(e.nodes))
		counts  = make(map[string]int, 2)
		absent  int
		errs    *multierror.Error
	)
	for range e.nodes {
		r := <-ch
		if r.err != nil {
			errs = multierror.Append(errs, &NodeError{Addr: e.nodes[r.node].Addr(), Err: r.err})
			continue
		}
		answers = append(answers, r)
		if !r.val.Found {
			absent++
		} else if counts[r.val.Value]++; early && counts[r.val.Value] >= e.quorum {
			return e.majorityEntry(r.val.Value, answers), nil
		}
		if absent > len(e.nodes)-e.quorum {
			return Entry{}, nil // no value can reach Q any more
		}
	}
	for value, c := range counts {
		if c >= e.quorum {
			return e.majorityEntry(value, answers), nil
		}
	}
	// No value reached Q. That is a definite "absent" only if no value could
	// have, had the failed nodes answered.
	best := 0
	for _, c := range counts {
		best = max(best, c)
	}
	if failed := len(e.nodes) - len(answers); best+failed >= e.quorum {
		if errs != nil {
			errs.ErrorFormat = oneLine
		}
		return Entry{}, &RoundError{Op: "read", Reason: ErrNoQuorum, Votes: len(answers), Nodes: len(e.nodes), Quorum: e.quorum, NodeErrs: errs}
	}
	return Entry{}, nil
}

// majorityEntry builds the answer for value from the nodes that hold it.
func (e *Engine) majorityEntry(value string, answers []result[Entry]) Entry {
	ttls := make([]time.Duration, 0, len(answers))
	for _, a := range answers {
		if a.val.Found && a.val.Value == value {
			ttls = append(ttls, a.val.TTL)
		}
	}
	slices.Sort(ttls)
	slices.Reverse(ttls)
	ttl := ttls[e.quorum-1]
	if ttl < 0 {
		return Entry{Found: true, Value: value, TTL: ttl}
	}
	ttl -= e.Drift(ttl)
	if ttl <= 0 {
		return Entry{}
	}
	return Entry{Found: true, Value: value, TTL: ttl}
}

// NodeStatus is one node's health as seen by a PING.
type NodeStatus struct {
	Addr    string
	Up      bool
	Latency time.Duration
	Err     error
}

// Status pings every node at once, each bounded by the node timeout.
func (e *Engine) Status(ctx context.Context) []NodeStatus {
	ch := fanOut(ctx, e.nodes, e.opts.nodeTimeout, func(ctx context.Context, n Node) (time.Duration, error) {
		start := time.Now()
		err := n.Ping(ctx)
		return time.Since(start), err
	})
	out := make([]NodeStatus, len(e.nodes))
	for range e.nodes {
		r := <-ch
		out[r.node] = NodeStatus{Addr: e.nodes[r.node].Addr(), Up: r.err == nil, Latency: r.val, Err: r.err}
	}
	return out
}
