package quorum

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Lock is a lock held by a quorum, as the admin view lists it.
type Lock struct {
	Key   string
	Owner string
	TTL   time.Duration // conservative, as Read gives it
}

// Locks lists up to limit locks whose keys start with prefix and that a
// quorum holds now: every usable node is scanned for the keys, then each key
// is read by quorum. It fails with ErrNoQuorum when fewer than Q nodes could
// be scanned, since a lock could then hide on the others.
func (e *Engine) Locks(ctx context.Context, prefix string, limit int) ([]Lock, error) {
	keys, err := e.LockKeys(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	return e.ReadLocks(ctx, keys, limit)
}

// LockKeys is Locks' first half: the sorted keys starting with prefix that
// a scan of every usable node found (at most limit keys per node, internal
// ones included, are scanned), which may hold locks. ErrNoQuorum when fewer
// than Q nodes could be scanned.
func (e *Engine) LockKeys(ctx context.Context, prefix string, limit int) ([]string, error) {
	type scan struct {
		keys []string
		err  error
	}
	results := make(chan scan, len(e.nodes))
	for i, n := range e.nodes {
		go func() {
			if e.health[i].isDown() {
				results <- scan{err: &NodeError{Addr: n.Addr(), Err: errDown}}
				return
			}
			sctx, cancel := context.WithTimeout(ctx, 10*e.opts.NodeTimeout)
			defer cancel()
			keys, err := n.Keys(sctx, prefix, limit)
			if err != nil {
				err = &NodeError{Addr: n.Addr(), Err: err}
			}
			results <- scan{keys, err}
		}()
	}
	seen := map[string]bool{}
	var errs *multierror.Error
	scanned := 0
	for range e.nodes {
		r := <-results
		if r.err != nil {
			errs = multierror.Append(errs, r.err)
			continue
		}
		scanned++
		for _, k := range r.keys {
			seen[k] = !IsInternal(k)
		}
	}
	if scanned < e.quorum {
		errs.ErrorFormat = oneLine
		return nil, &RoundError{Op: RoundScan, Reason: ErrNoQuorum, Votes: scanned, Nodes: len(e.nodes), Quorum: e.quorum, NodeErrs: errs}
	}
	keys := make([]string, 0, len(seen))
	for k, lock := range seen {
		if lock {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// ReadLocks is Locks' second half: it reads keys by quorum, in order, and
// returns up to limit of them that a quorum holds as locks.
func (e *Engine) ReadLocks(ctx context.Context, keys []string, limit int) ([]Lock, error) {
	var locks []Lock
	for _, k := range keys {
		if len(locks) == limit {
			break
		}
		entry, err := e.Read(ctx, k)
		if err != nil {
			return nil, err
		}
		if entry.Found {
			locks = append(locks, Lock{Key: k, Owner: entry.Value, TTL: entry.TTL})
		}
	}
	return locks, nil
}
