package quorum

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"
)

// Semaphores by quorum (doc.go's Semaphores points here).
//
// A semaphore of p permits (AcquirePermit: Redisson's
// RPermitExpirableSemaphore) is p slots, each a lock: a node gives a
// permit's id one free slot below its own p, and only while it holds fewer
// than p; a grant needs Q nodes that gave the id the same slot. Two holders
// of one slot at once would have two quorums for it, which share a node
// that gave that slot to both while both held it: so there are never more
// holders than slots, and no slot above the Q-th largest p (ReadPermits)
// has a quorum. A count of permits taken by majority is not safe: N*p node
// grants let N*p/Q holders in (e2e permitsOverMajorities: three holders of
// two permits). Each permit is leased and lapses at its padded TTL, so
// restart quarantine covers a node that lost one; a permit without a lease
// could not be covered, and the proxy refuses it. A node that gave the id
// another slot gives it back; a round that split gives back every slot and
// tells the caller to try again soon. A give-back frees only what its own
// round gave (a node refuses an id it holds already, as SET NX does: a
// retry through another replica keeps what it won), a lease update counts
// only a quorum holding the id in one slot and pins it there (no rollback
// frees it after), and a lease update lands only where it is newer (a
// version one past the highest a quorum has) than the last one. The
// number of permits is put back on a node that answers none while a
// quorum has it (but not a generation of it a recent DEL read), and set
// only where none is (InitPermits): a change over it that failed could
// land late, over a later one, after grants counted on it.
// Not in model/*.pml; e2e fault suite's permit rows,
// permits_review*_test.go.

// PermitsTaken is why AcquirePermit failed when no quorum gave the id one
// slot: every permit is held on enough nodes, or (Wait short) the nodes
// gave it different slots, and a try soon may succeed.
type PermitsTaken struct {
	*RoundError
	// Wait is how long until enough of the refusing nodes' first permits
	// lapse for a quorum to have a slot, in their terms; 0 when none does.
	Wait time.Duration
}

// Unwrap lets errors.Is see ErrTaken.
func (p *PermitsTaken) Unwrap() error { return p.RoundError }

// AcquirePermit takes one permit of semaphore name for id with ttl (padded
// for drift), with Acquire's rules: a quorum agreeing on the id's slot, and
// more than the minimum validity left. The nodes that gave it another slot
// give it back once every answer is in; a failed round gives back every
// slot it may have taken. A give-back frees only what its own round gave
// (the round id beside the slot): an id a node holds already is refused
// there, as SET NX refuses, so a retry of the same id through another
// replica keeps what it won whatever the first try's rollback does.
func (e *Engine) AcquirePermit(ctx context.Context, name, id string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(name); err != nil {
		return Grant{}, err
	}
	op := Op{Kind: OpSemaphore, Mode: "take", Key: name, Value: id, N: int64(rand.Uint32()), Round: e.newRoundID()}
	r, err := e.startTimed(ctx, op, ttl)
	if err != nil {
		return Grant{}, err
	}
	r.drainUntil(func() bool { _, n := r.slotAgreed(); return n >= e.quorum })
	slot, n := r.slotAgreed()
	r.elapsed = time.Since(r.start)
	e.repairPermits(name, r.round, false)
	undo := Op{Kind: OpSemaphore, Mode: "undo", Key: name, Value: id, Round: op.Round}
	if n >= e.quorum && r.ttl-r.elapsed > e.opts.MinValidity {
		g := Grant{Validity: r.ttl - r.elapsed, Votes: n, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity)}
		e.monitors.Go(func() {
			r.settled.Wait()
			e.rollback(undo, r.otherSlots(slot))
		})
		return e.grant(r, g, undo, (*round).maybeWrote), nil
	}
	defer r.unlock()
	r.drain()
	rerr := r.roundError(RoundAcquire, ErrNoQuorum)
	rerr.Votes = n // of one slot
	rerr.addNodeErrs(e.rollback(undo, r.maybeWrote()))
	switch {
	case n >= e.quorum:
		rerr.Reason, rerr.Spent = ErrValiditySpent, r.elapsed
		return Grant{}, rerr
	case r.nYes+r.nNo < e.quorum: // too few answered to tell
		return Grant{}, rerr
	}
	rerr.Reason = ErrTaken
	e.contended(name)
	if r.nNo > len(r.votes)-e.quorum {
		return Grant{}, &PermitsTaken{RoundError: rerr, Wait: r.firstLapse()}
	}
	// Free slots, but the nodes gave the id different ones (others took
	// permits at once): the next try, a little apart from theirs, may get one.
	return Grant{}, &PermitsTaken{RoundError: rerr, Wait: time.Duration(5+rand.IntN(20)) * time.Millisecond}
}

// slotAgreed is the slot most nodes that count gave the id, and how many.
func (t *round) slotAgreed() (slot int64, n int) {
	for j, v := range t.votes {
		if v != yes {
			continue
		}
		c := 0
		for k := range t.votes {
			if t.votes[k] == yes && t.replies[k].N == t.replies[j].N {
				c++
			}
		}
		if c > n {
			slot, n = t.replies[j].N, c
		}
	}
	return slot, n
}

// otherSlots lists the nodes that gave the id a slot other than slot.
func (t *round) otherSlots(slot int64) []int {
	var idx []int
	for j, rep := range t.replies {
		if rep.Err == nil && rep.OK && rep.N != slot {
			idx = append(idx, j)
		}
	}
	return idx
}

// firstLapse is when enough of the nodes that refused have their first
// permit lapse that a quorum could give a slot (0: none lapses), in their
// terms: a try then may get it.
func (t *round) firstLapse() time.Duration {
	var lapses []int64
	for j, v := range t.votes {
		if ms := t.replies[j].N; v == no && ms > 0 {
			lapses = append(lapses, ms)
		}
	}
	if len(lapses) == 0 {
		return 0
	}
	slices.Sort(lapses)
	// With h nodes refusing, Q are free once h-(N-Q) of them lapsed.
	i := min(max(len(lapses)-(len(t.votes)-t.quorum)-1, 0), len(lapses)-1)
	return time.Duration(lapses[i]+1) * time.Millisecond
}

// holderTerms is a node's TTL of ms (padded for drift) as the holder's
// window sees it.
func (e *Engine) holderTerms(ms int64) time.Duration {
	unpadded := float64(ms)*(1-e.opts.DriftFactor) - 2
	return max(time.Duration(unpadded)*time.Millisecond, time.Millisecond)
}

// ReleasePermit frees id's permit of semaphore name on every node, waiting
// for all of them. It reports whether a quorum held it (within its lease),
// and the permits a node that freed it has free now (at least 1 when
// released); ErrNotHeld when more than N-Q nodes out of restart quarantine
// did not hold it; else ErrNoQuorum.
func (e *Engine) ReleasePermit(ctx context.Context, name, id string) (free int64, err error) {
	if err := reservedKey(name); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := e.start(nil, Op{Kind: OpSemaphore, Mode: "drop", Key: name, Value: id}, e.opts.NodeTimeout, false)
	t.drain()
	if t.nYes >= e.quorum {
		free = 1
		for j, v := range t.votes {
			if v == yes {
				free = max(free, t.replies[j].N)
			}
		}
		return free, nil
	}
	return 0, t.roundError(RoundRelease, e.releaseFailure(t))
}

// ExtendPermit sets id's permit of semaphore name to last ttl (padded)
// from now on every node that holds it, with Extend's rules, but that only
// a quorum holding it in one slot counts: nodes that gave the id another
// slot (theirs not yet given back) hold no permit a quorum agrees on. It
// pins the permit where it lands: no rollback of the acquire that gave it
// frees it there (a failed try's, whose retry through another replica won
// it). Updates are ordered by version: each reads the highest version of
// id's updates a quorum has (permitVersion) and lands, one past it, only
// where it is past the node's last; an update answered before another was
// sent is read by it, so a late copy of an earlier update (a shortening)
// never undoes a later one, whatever the clients' clocks say. A
// shortening that fails may have shortened it on some nodes, or may yet
// (its version can pass a later update's that read other nodes), as a
// release that fails may have released it.
func (e *Engine) ExtendPermit(ctx context.Context, name, id string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(name); err != nil {
		return Grant{}, err
	}
	v, err := e.permitVersion(ctx, name, id)
	if err != nil {
		return Grant{}, err
	}
	r, err := e.startTimed(ctx, Op{Kind: OpSemaphore, Mode: "lease", Key: name, Value: id, N: v + 1}, ttl)
	if err != nil {
		return Grant{}, err
	}
	r.drainUntil(func() bool { _, n := r.slotAgreed(); return n >= e.quorum })
	_, n := r.slotAgreed()
	r.elapsed = time.Since(r.start)
	r.finish(r.unlock)
	switch {
	case n >= e.quorum && r.ttl-r.elapsed > e.opts.MinValidity:
		return Grant{Validity: r.ttl - r.elapsed, Votes: n, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity)}, nil
	case n >= e.quorum:
		rerr := r.roundError(RoundExtend, ErrValiditySpent)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	rerr := r.roundError(RoundExtend, r.failure(RoundExtend))
	rerr.Votes = n
	return Grant{}, rerr
}

// permitVersion is the highest version of id's lease updates that the
// first Q nodes to answer have (0: none yet): any update answered by a
// quorum is among them.
func (e *Engine) permitVersion(ctx context.Context, name, id string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := e.start(nil, Op{Kind: OpSemaphore, Mode: "ver", Key: name, Value: id}, e.opts.NodeTimeout, false)
	t.drainUntil(func() bool { return t.nYes+t.nNo >= e.quorum })
	if t.nYes+t.nNo < e.quorum {
		rerr := t.roundError(RoundExtend, ErrNoQuorum)
		rerr.Votes = t.nYes + t.nNo
		return 0, rerr
	}
	var v int64
	for j, vote := range t.votes {
		if vote == yes || vote == no {
			v = max(v, t.replies[j].N)
		}
	}
	return v, nil
}
