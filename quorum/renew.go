package quorum

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"
)

// Lease is one lock of a batched renewal (Renew): Key held by Value, to be
// extended to TTL. In an OpRenew the engine gives TTL padded and Pad set.
// With a Round (Grant.Round of the grant or re-attach its holder booked),
// it is extended only where the lock's note names that round, and a restore
// notes it: a lock its holder re-attached elsewhere (Reattach) is no longer
// this renewer's.
type Lease struct {
	Key, Value string
	TTL, Pad   time.Duration
	Round      string
	// Token is what a restore notes beside the lock (Renew sets it): the
	// token part of the note Q holders agreed on in the renewal, "<token>"
	// fenced, "=<token>" fixed, or NoToken; "" when they did not agree: a
	// fenced lock's note without its token, which yields to theirs.
	Token string
	// Granted is the fencing token the lock's grant answered its holder (a
	// fenced acquire's, or the one a re-attach of a fenced lock moved; 0:
	// none).
	// A renewal makes it final where its holder notes it tentative (the
	// grant's confirmation did not land there), and a restore whose
	// holders did not agree on a token notes it: it is the lock's token.
	Granted int64
}

// NoToken is Lease.Token for a lock whose holders note no token.
const NoToken = "-"

// maxLeasesPerOp bounds one renewal script on a backend: Redis runs a
// script to its end before serving anything else, so a tick's renewals go
// out as several scripts in the node's one pipelined write. A script of 128
// locks holds a backend well under a millisecond (512 held it about 3 ms:
// another tenant's lone round waited that long behind a flood of session
// locks, issue 25).
const maxLeasesPerOp = 128

// Renew extends many locks at once, each on Extend's rules: one operation per
// node carries every lease (in scripts of up to 128 locks, sent in the same
// pipelined write, in the caller's order), instead of one round per lock;
// each script waits for its nodes as long as its own locks' shortest TTL allows. It returns one error per
// lease: nil when Q counting nodes extended it with more than the minimum
// validity left of its TTL, measured from the caller's arrival (WithArrival);
// else a *RoundError with Reason ErrNotHeld (the lock is gone on so many
// nodes that it cannot be held), ErrNoQuorum or ErrValiditySpent.
//
// Unlike Extend, Renew takes no (key, value) slot: a renewal only sets a TTL
// where the holder's window is still open, and a release or extend of the
// same lock running beside it is ordered by each node, either way safe.
//
// Renew also restores each lease's lock on the nodes that lost it (a
// restart, a pause past its TTL), with the same padded TTL, where both
// the key and its note are absent: never over another owner's key, nor
// during a lock-delay. A restored node does not count in the renewal that
// restored it, only in later ones that find the lock held there, so a lock
// held on exactly a quorum after a fault is back on every node and
// survives one more. Its note carries the token Q holders noted in this
// renewal (else a fenced lock's note without one, which yields to the
// holders' tokens on a read), outliving the key by NativeLockDelay. A renewal that lands after its lock was
// released would restore it: the caller releases a lock it renews only
// after its renewal round ended (a renewal delayed beyond its deadline on
// a stalled node can still restore it there, until its TTL).
func (e *Engine) Renew(ctx context.Context, leases []Lease) []error {
	errs := make([]error, len(leases))
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	start := arrival(ctx)
	shortest := time.Duration(0)
	padded := make([]Lease, len(leases))
	for i, l := range leases {
		if err := cmp.Or(reservedKey(l.Key), e.checkTTL(l.TTL)); err != nil {
			errs[i] = err
			continue
		}
		if shortest == 0 || l.TTL < shortest {
			shortest = l.TTL
		}
		p := e.PaddedTTL(l.TTL)
		padded[i] = Lease{Key: l.Key, Value: l.Value, TTL: p, Pad: p - l.TTL, Round: l.Round, Granted: l.Granted}
	}
	if shortest == 0 {
		return errs
	}
	// Each batch waits as long as its own shortest lock allows, not the
	// shortest of all: a caller that orders leases by deadline (nearest
	// first) gets its urgent locks into the first scripts each node runs,
	// and a flood of other locks in later batches cannot make them miss
	// their own deadline.
	var batches []*renewBatch
	for from := 0; from < len(padded); from += maxLeasesPerOp {
		to := min(from+maxLeasesPerOp, len(padded))
		own := time.Duration(0)
		for i := from; i < to; i++ {
			if errs[i] == nil && (own == 0 || leases[i].TTL < own) {
				own = leases[i].TTL
			}
		}
		batches = append(batches, e.sendRenewal(padded[from:to], from, e.lockTimeout(cmp.Or(own, shortest))))
	}
	for _, b := range batches {
		b.collect()
		elapsed := time.Since(start)
		for j, yes := range b.yes {
			i := b.from + j
			if errs[i] != nil {
				continue
			}
			switch {
			case yes >= e.quorum && leases[i].TTL-elapsed > e.opts.MinValidity:
			case yes >= e.quorum:
				errs[i] = &RoundError{Op: RoundExtend, Reason: ErrValiditySpent, Votes: yes, Nodes: len(e.nodes), Quorum: e.quorum, Spent: elapsed}
			case b.no[j] > len(e.nodes)-e.quorum:
				errs[i] = &RoundError{Op: RoundExtend, Reason: ErrNotHeld, Votes: yes, Nodes: len(e.nodes), Quorum: e.quorum}
			default:
				errs[i] = &RoundError{Op: RoundExtend, Reason: ErrNoQuorum, Votes: yes, Nodes: len(e.nodes), Quorum: e.quorum}
			}
		}
	}
	e.restore(batches, padded, errs, shortest)
	return errs
}

// note counts a counting holder's token part for lease j ("0", a fenced
// lock's note without its token, says nothing; "?<token>", tentative,
// counts only beside the same token final, agreed).
func (b *renewBatch) note(j int, n string) {
	switch {
	case n == "0":
	case strings.HasPrefix(n, "?"):
		if b.tent[j] == "" || b.tent[j] == n[1:] {
			b.tent[j] = n[1:]
			b.tents[j]++
		}
	case b.agree[j] == 0:
		b.notes[j], b.agree[j] = cmp.Or(n, NoToken), 1
	case b.notes[j] == cmp.Or(n, NoToken):
		b.agree[j]++
	default:
		b.split[j] = true
	}
}

// agreed is how many counting holders of lease j note the token they
// agree on, final or (beside the same one final) tentative; 0 when split.
func (b *renewBatch) agreed(j int) int {
	if b.split[j] || b.agree[j] == 0 {
		return 0
	}
	if b.tent[j] != "" && b.tent[j] == b.notes[j] {
		return b.agree[j] + b.tents[j]
	}
	return b.agree[j]
}

// restore sets the leases this renewal extended on a quorum again on the
// nodes that answered they did not hold them (a restart, a pause past the
// TTL), where both key and note are absent. Only then: a lease no quorum
// held in this very renewal may have been released (through another
// replica, or by the holder it was re-attached to) and must not come back.
// The restores are sent, not awaited: each node runs them before anything
// sent to it later (a release after this renewal returns), and they count
// in no renewal but later ones that find the lock held there.
func (e *Engine) restore(batches []*renewBatch, padded []Lease, errs []error, shortest time.Duration) {
	perNode := make([][]Lease, len(e.nodes))
	for _, b := range batches {
		for n, idx := range b.absent {
			for _, j := range idx {
				if i := b.from + j; errs[i] == nil {
					l := padded[i]
					switch {
					case b.agreed(j) >= e.quorum:
						l.Token = b.notes[j] // the token Q holders note, never a guess
					case l.Granted > 0:
						l.Token = strconv.FormatInt(l.Granted, 10) // the token its grant answered
					}
					perNode[n] = append(perNode[n], l)
				}
			}
		}
	}
	deadline := time.Now().Add(e.lockTimeout(shortest))
	for n, leases := range perNode {
		for from := 0; from < len(leases); from += maxLeasesPerOp {
			part := leases[from:min(from+maxLeasesPerOp, len(leases))]
			// Noted with the lock-delay its kind of lock was acquired with (pexpireifeq.lua):
			// AuxTTL the native locks', TTL the others'.
			e.send([]int{n}, Op{Kind: OpRenew, Leases: &part, TTL: e.opts.LockDelay, AuxTTL: e.opts.NativeLockDelay, N: 1}, deadline)
		}
	}
}

// renewBatch counts, per lease of one renewal operation, the counting nodes
// that extended it and those that answered it is not held.
type renewBatch struct {
	e        *Engine
	ch       <-chan answer
	from     int
	yes, no  []int
	absent   [][]int  // per node, the leases it did not extend (answered, not held there)
	notes    []string // per lease, the token part of its note the counting nodes that extended it agree on
	agree    []int    // how many of them note it
	split    []bool   // they do not agree
	tent     []string // per lease, the tentative token some of them note
	tents    []int    // how many
	counts   []bool   // node j could count when the operation was sent
	deadline time.Time
}

func (e *Engine) sendRenewal(leases []Lease, from int, timeout time.Duration) *renewBatch {
	now := time.Now()
	b := &renewBatch{e: e, from: from, yes: make([]int, len(leases)), no: make([]int, len(leases)),
		counts: make([]bool, len(e.nodes)), deadline: now.Add(timeout),
		notes: make([]string, len(leases)), agree: make([]int, len(leases)), split: make([]bool, len(leases)),
		tent: make([]string, len(leases)), tents: make([]int, len(leases))}
	for i := range e.nodes {
		b.counts[i] = e.counts(i, now)
	}
	// A restored lock is noted with the native locks' lock-delay (session
	// locks are LOCK.ACQUIRE's), as their acquire noted it.
	b.ch = e.send(nil, Op{Kind: OpRenew, Leases: &leases}, b.deadline)
	b.absent = make([][]int, len(e.nodes))
	return b
}

// collect waits for every node's answer, or the deadline: a renewal has no
// early verdict, each of its locks needs its own quorum.
func (b *renewBatch) collect() {
	timer := time.NewTimer(time.Until(b.deadline))
	defer timer.Stop()
	for range b.e.nodes {
		select {
		case a := <-b.ch:
			b.add(a)
		case <-timer.C:
			return
		}
	}
}

func (b *renewBatch) add(a answer) {
	if a.reply.Err != nil || a.reply.Each == nil || len(*a.reply.Each) != len(b.yes) {
		return
	}
	counts := b.counts[a.node] && b.e.counts(a.node, time.Now())
	for j, ok := range *a.reply.Each {
		switch {
		case ok && counts:
			b.yes[j]++
			if a.reply.Notes != nil && len(*a.reply.Notes) == len(b.yes) {
				b.note(j, (*a.reply.Notes)[j])
			}
		case !ok:
			b.no[j]++
			b.absent[a.node] = append(b.absent[a.node], j)
		}
	}
}
