package quorum

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Reentrant hash locks keep Redisson's layout on every node: the lock key is
// a hash of owner -> hold count, so one owner may take it again and must give
// it up as many times. The quorum rules are those of string locks; the hold
// counts are each node's own and may differ after partial failures, so
// results are judged by what a quorum says.

// HashTaken is the reason AcquireHash failed when another owner holds the lock.
type HashTaken struct {
	*RoundError
	// Wait is how long until enough holders' keys expire for a quorum to be
	// free: the holder's PTTL as the caller should see it.
	Wait time.Duration
}

// Unwrap lets errors.Is see ErrTaken.
func (h *HashTaken) Unwrap() error { return h.RoundError }

// AcquireHash takes or re-enters the hash lock key for owner with ttl (padded
// for drift) on a quorum, with Acquire's rules. With tokenKey it is a fenced
// grant: each node counts the grant in its counter tokenKey, the Grant's
// Token is the largest count of the quorum, and before AcquireHash returns
// a quorum's counters are raised to it, so every later grant gets a larger one.
//
// On failure the holds this round added are given back. A lock another owner
// holds fails with a *HashTaken (errors.Is ErrTaken).
func (e *Engine) AcquireHash(ctx context.Context, key, owner string, ttl time.Duration, tokenKey string) (Grant, error) {
	r, err := e.startTimed(ctx, Op{Kind: OpHashAcquire, Key: key, Value: owner, Aux: tokenKey}, ttl)
	if err != nil {
		return Grant{}, err
	}
	g, rerr := e.verdict(r, "acquire", ErrTaken, "taken")
	fenced := rerr == nil && tokenKey != ""
	if fenced {
		g, rerr = e.fence(r, tokenKey, g)
	}
	if rerr == nil {
		r.finish(r.unlock)
		return g, nil
	}
	defer r.unlock()
	r.drain()
	if !fenced {
		_, rerr = e.verdict(r, "acquire", ErrTaken, "taken")
	}
	var granted []int
	for j, rep := range r.replies {
		if rep.Err == nil && rep.OK {
			granted = append(granted, j)
		}
	}
	// Only nodes that said they granted give a hold back: on a node that did
	// not answer, the hold may be one the owner already had.
	if rb := e.rollback(Op{Kind: OpHashUnhold, Key: key, Value: owner, N: 1}, granted); rb != nil {
		if rerr.NodeErrs == nil {
			rerr.NodeErrs = &multierror.Error{ErrorFormat: oneLine}
		}
		rerr.NodeErrs.Errors = append(rerr.NodeErrs.Errors, rb.Errors...)
	}
	if rerr.Reason != ErrTaken {
		return Grant{}, rerr
	}
	return Grant{}, &HashTaken{RoundError: rerr, Wait: e.holderWait(r.tally)}
}

// fence raises a quorum's token counters to the largest token of the
// quorum that granted, and checks the validity left after that second step.
func (e *Engine) fence(r *timedRound, tokenKey string, g Grant) (Grant, *RoundError) {
	for j, v := range r.votes {
		if v == yes {
			g.Token = max(g.Token, r.replies[j].Token)
		}
	}
	t := e.start(nil, Op{Kind: OpRaise, Key: tokenKey, N: g.Token}, e.lockTimeout(r.ttl), false)
	t.collect()
	if t.nYes < e.quorum {
		rerr := t.roundError("fence", ErrNoQuorum, e.nodes, "not raised")
		t.finish(func() {})
		return Grant{}, rerr
	}
	t.finish(func() {})
	r.elapsed = time.Since(r.start)
	if g.Validity = r.ttl - r.elapsed; g.Validity <= e.opts.minValidity {
		rerr := r.roundError("acquire", ErrValiditySpent, e.nodes, "taken")
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return g, nil
}

// holderWait is, from the PTTLs the taken nodes reported, how long until
// enough of them expire that a quorum could be free, in the holder's terms:
// the backends' TTLs are padded for drift, the holder's window is not.
func (e *Engine) holderWait(t *tally) time.Duration {
	var ttls []int64
	for j, v := range t.votes {
		if v == no && t.replies[j].N > 0 {
			ttls = append(ttls, t.replies[j].N)
		}
	}
	if len(ttls) == 0 {
		return 0
	}
	slices.Sort(ttls)
	// With h nodes held, Q are free once h-(N-Q) of them expired.
	i := min(max(len(ttls)-(len(e.nodes)-e.quorum)-1, 0), len(ttls)-1)
	unpadded := float64(ttls[i])*(1-e.opts.driftFactor) - 2
	return max(time.Duration(unpadded)*time.Millisecond, time.Millisecond)
}

// HashRelease is what giving up a hold of a hash lock did.
type HashRelease int

// The outcomes of ReleaseHash.
const (
	Released  HashRelease = 1 // the lock is free
	StillHeld HashRelease = 0 // the owner still holds it (it had taken it more than once)
)

// ReleaseHash gives up one hold of owner on the hash lock key on every node;
// ttl (padded) stays the lock's TTL while holds remain. With latch, each node
// keeps its result there for latchTTL and answers a repeated call with it
// (Redisson's unlock latch, so a retried unlock does not give up two holds).
//
// It waits for every node. StillHeld when a quorum still holds it; Released
// when a quorum held it before but not after, and then holds left on other
// nodes are removed too; ErrNotHeld when a quorum says owner did not hold
// it (absent counts as released with absentReleased); ErrNoQuorum otherwise.
func (e *Engine) ReleaseHash(ctx context.Context, key, owner string, ttl time.Duration, latch string, latchTTL time.Duration, absentReleased bool) (HashRelease, error) {
	if err := e.checkTTL(ttl); err != nil {
		return 0, err
	}
	unlock, err := e.keys.lock(ctx, key, owner)
	if err != nil {
		return 0, err
	}
	op := Op{Kind: OpHashRelease, Key: key, Value: owner, TTL: e.PaddedTTL(ttl), Aux: latch, AuxTTL: latchTTL}
	t := e.start(nil, op, e.opts.nodeTimeout, false)
	t.drain()
	var released, held, notHeld int
	var rest []int // nodes that may still hold it
	for j, v := range t.votes {
		if v == failed || v == skipped {
			rest = append(rest, j)
			continue
		}
		switch n := t.replies[j].N; {
		case n == 1 || n == -2 && absentReleased:
			released++
		case n == 0:
			held++
			rest = append(rest, j)
		default:
			notHeld++
		}
	}
	switch {
	case held >= e.quorum:
		unlock()
		return StillHeld, nil
	case released+held >= e.quorum:
		go func() {
			defer unlock()
			e.rollback(Op{Kind: OpHashUnhold, Key: key, Value: owner}, rest)
		}()
		return Released, nil
	}
	unlock()
	rerr := t.roundError("release", ErrNoQuorum, e.nodes, "not held")
	rerr.Votes = released + held
	if notHeld > len(e.nodes)-e.quorum {
		rerr.Reason = ErrNotHeld
	}
	return 0, rerr
}

// ExtendHash sets the TTL of hash lock key to ttl (padded) on every node
// where owner holds it, with Extend's rules.
func (e *Engine) ExtendHash(ctx context.Context, key, owner string, ttl time.Duration) (Grant, error) {
	return e.extend(ctx, Op{Kind: OpHashExtend, Key: key, Value: owner}, ttl)
}

// ReadField reads field of hash key like Read reads a key: the value a
// quorum holds, and the conservative TTL of the key. With presence, only
// whether a quorum has the field counts, not its value (hold counts may
// differ between nodes).
func (e *Engine) ReadField(ctx context.Context, key, field string, presence bool) (Entry, error) {
	return e.read(ctx, Op{Kind: OpHashGet, Key: key, Value: field}, false, presence)
}

// ReadCounter reads a counter every node keeps for itself, such as a
// fencing token counter: the Q-th largest value, which a quorum has reached.
// A node without the key counts 0. It waits for every node; fewer than Q
// answers is ErrNoQuorum.
func (e *Engine) ReadCounter(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := e.start(nil, Op{Kind: OpRead, Key: key}, e.opts.nodeTimeout, false)
	t.drain()
	var values []int64
	for j, v := range t.votes {
		if v == failed || v == skipped {
			continue
		}
		n, _ := strconv.ParseInt(t.replies[j].Entry.Value, 10, 64)
		values = append(values, n)
	}
	if len(values) < e.quorum {
		rerr := t.roundError("read", ErrNoQuorum, e.nodes, "")
		rerr.Votes = len(values)
		return 0, rerr
	}
	slices.Sort(values)
	return values[len(values)-e.quorum], nil
}
