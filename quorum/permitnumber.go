package quorum

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// A semaphore's number of permits (semaphore.go has the argument): set
// only where none is (InitPermits), read as the Q-th largest of the
// nodes' (ReadPermits), and put back on a node that restarted empty
// (repairPermits), but not as a generation a recent DEL deleted.

// Permits is a semaphore as a quorum has it: the number of permits (the
// Q-th largest of the nodes', so that no grant could use a slot beyond it)
// and the permits a quorum holds in one slot, each with the time a quorum
// still holds it, in the holder's terms.
type Permits struct {
	Permits int64
	Set     bool // a quorum has the number set
	Held    map[string]time.Duration
}

// repairPermits puts semaphore name's number of permits back on the nodes
// of round t that answered none (restarted empty) while the number a
// quorum has (the Q-th largest answered) is more: in the background, and
// only where none is set (a trySetPermits of the moment wins) and no recent
// DEL of the semaphore read its generation (SemaphoreGoneKey: a repair
// sent by a read that saw it before the DEL lands as nothing; a number set
// again since, by a trySetPermits that missed the node, is repaired). Each answer carries the node's
// number in Pre, a read's in N (state).
func (e *Engine) repairPermits(name string, t *round, state bool) {
	var counts []int64
	var bare []int
	gens := map[int64][]string{} // each count's generations, as answered
	for j, rep := range t.replies {
		if t.votes[j] == failed || t.votes[j] == skipped || t.votes[j] == pending || rep.Err != nil {
			continue
		}
		n := rep.Pre
		if state {
			n = rep.N
		}
		counts = append(counts, n)
		gens[n] = append(gens[n], rep.Entry.Round)
		if n == 0 {
			bare = append(bare, t.idx[j])
		}
	}
	if len(counts) < e.quorum || len(bare) == 0 {
		return
	}
	slices.Sort(counts)
	if p := counts[len(counts)-e.quorum]; p > 0 {
		g := commonGeneration(gens, p)
		e.monitors.Go(func() {
			e.start(bare, Op{Kind: OpSemaphore, Mode: "repair", Key: name, N: p, Round: g}, e.opts.NodeTimeout, false).drain()
		})
	}
}

// commonGeneration is the generation most of the nodes with at least p
// permits answered: the repair carries it, and lands nowhere a recent DEL
// read it.
func commonGeneration(gens map[int64][]string, p int64) string {
	seen := map[string]int{}
	best := ""
	for n, gs := range gens {
		if n < p {
			continue
		}
		for _, g := range gs {
			seen[g]++
			if seen[g] > seen[best] || seen[g] == seen[best] && g < best {
				best = g
			}
		}
	}
	return best
}

// InitPermits sets semaphore name's number of permits to n where none is
// set, on every node, waiting for all of them (Redisson's trySetPermits),
// unless a quorum has one already.
// It reports whether a quorum out of restart quarantine set it, false when
// more than N-Q had one; else ErrNoQuorum. A change that failed may have
// landed, now or later (a late copy): nothing rolls it back, for grants
// may have counted on it already (helper-100). Only this change of the
// number is served: one that overwrote it (setPermits, addPermits) could
// land late over a later change (proxy/permits.go).
func (e *Engine) InitPermits(ctx context.Context, name string, n int64) (bool, error) {
	if err := reservedKey(name); err != nil {
		return false, err
	}
	// A quorum with a number answers 0 without a write: "init" would set n
	// on a node that restarted empty, and a rolling restart would then give
	// a majority a number no call set (helper-101). The read repairs it.
	if p, err := e.ReadPermits(ctx, name); err != nil {
		return false, err
	} else if p.Set {
		return false, nil
	}
	t := e.start(nil, Op{Kind: OpSemaphore, Mode: "init", Key: name, N: n, Round: e.newRoundID()}, e.opts.NodeTimeout, true)
	t.drain()
	switch {
	case t.nYes >= e.quorum:
		return true, nil
	case t.nNo > len(t.votes)-e.quorum:
		return false, nil
	}
	return false, t.roundError(RoundAcquire, ErrNoQuorum)
}

// ReadPermits reads semaphore name as a quorum out of restart quarantine
// has it (Permits), waiting for every node.
func (e *Engine) ReadPermits(ctx context.Context, name string) (Permits, error) {
	if err := reservedKey(name); err != nil {
		return Permits{}, err
	}
	if err := ctx.Err(); err != nil {
		return Permits{}, err
	}
	t := e.start(nil, Op{Kind: OpSemaphore, Mode: "state", Key: name}, e.opts.NodeTimeout, true)
	t.drain()
	e.repairPermits(name, t, true)
	if t.nYes < e.quorum {
		rerr := t.roundError(RoundRead, ErrNoQuorum)
		rerr.Votes = t.nYes
		return Permits{}, rerr
	}
	var counts []int64
	type slotted struct{ id, slot string }
	left, set := map[slotted][]int64{}, 0
	for j, v := range t.votes {
		if v != yes {
			continue
		}
		counts = append(counts, t.replies[j].N)
		set += int(t.replies[j].Pre)
		held := *t.replies[j].Notes
		for i := 0; i+2 < len(held); i += 3 {
			if ms, _ := strconv.ParseInt(held[i+2], 10, 64); ms > 0 {
				k := slotted{held[i], held[i+1]}
				left[k] = append(left[k], ms)
			}
		}
	}
	slices.Sort(counts)
	p := Permits{Permits: counts[len(counts)-e.quorum], Set: set >= e.quorum, Held: map[string]time.Duration{}}
	for k, ms := range left {
		if len(ms) >= e.quorum { // a quorum holds it in one slot
			slices.Sort(ms)
			p.Held[k.id] = e.holderTerms(ms[len(ms)-e.quorum])
		}
	}
	return p, nil
}
