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
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	deadline := time.Now().Add(e.opts.nodeTimeout)
	ch := e.send(nil, Op{Kind: OpRead, Key: key}, deadline)
	timer := time.NewTimer(e.opts.nodeTimeout)
	defer timer.Stop()
	var (
		answers = make([]answer, 0, len(e.nodes))
		counts  = make(map[string]int, 2)
		absent  int
		errs    = make([]error, len(e.nodes))
	)
wait:
	for range e.nodes {
		var a answer
		select {
		case a = <-ch:
		case <-timer.C:
			break wait
		}
		if a.reply.Err != nil {
			errs[a.node] = a.reply.Err
			continue
		}
		answers = append(answers, a)
		if v := a.reply.Entry; !v.Found {
			absent++
		} else if counts[v.Value]++; early && counts[v.Value] >= e.quorum {
			return e.majorityEntry(v.Value, answers), nil
		}
		if absent > len(e.nodes)-e.quorum {
			return Entry{}, nil // no value can reach Q any more
		}
	}
	best := 0
	for value, c := range counts {
		if c >= e.quorum {
			return e.majorityEntry(value, answers), nil
		}
		best = max(best, c)
	}
	// No value reached Q. That is a definite "absent" only if no value could
	// have, had the failed nodes answered.
	if failed := len(e.nodes) - len(answers); best+failed >= e.quorum {
		return Entry{}, e.readError(answers, errs)
	}
	return Entry{}, nil
}

func (e *Engine) readError(answers []answer, errs []error) *RoundError {
	answered := make([]bool, len(e.nodes))
	for _, a := range answers {
		answered[a.node] = true
	}
	merr := &multierror.Error{ErrorFormat: oneLine}
	for i, n := range e.nodes {
		if answered[i] {
			continue
		}
		err := errs[i]
		if err == nil {
			err = context.DeadlineExceeded
		}
		merr.Errors = append(merr.Errors, &NodeError{Addr: n.Addr(), Err: err})
	}
	return &RoundError{Op: "read", Reason: ErrNoQuorum, Votes: len(answers), Nodes: len(e.nodes), Quorum: e.quorum, NodeErrs: merr}
}

// majorityEntry builds the answer for value from the nodes that hold it.
func (e *Engine) majorityEntry(value string, answers []answer) Entry {
	ttls := make([]time.Duration, 0, len(answers))
	for _, a := range answers {
		if v := a.reply.Entry; v.Found && v.Value == value {
			ttls = append(ttls, v.TTL)
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
