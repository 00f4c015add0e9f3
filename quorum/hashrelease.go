package quorum

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"time"
)

// HashRelease is what giving up a hold of a hash lock did.
type HashRelease int

// The outcomes of ReleaseHash.
const (
	Released  HashRelease = 1 // the lock is free
	StillHeld HashRelease = 0 // the owner still holds it (it had taken it more than once)
	// ReleasedShared: the owner's last hold of a read-write lock is given
	// up, and other holders keep the lock.
	ReleasedShared HashRelease = 2
)

// ReleaseHash gives up one hold of owner on the hash lock key on every node;
// ttl (padded) stays the lock's TTL while holds remain. With latch, each node
// keeps the result there for latchTTL and answers a repeated call with it
// (Redisson's unlock latch, so a retried unlock does not give up two holds).
//
// It waits for every node, and judges by the holds the nodes had before:
// the owner's count is the largest any node had (a node that missed earlier
// rounds may be behind, never a quorum), so the lock is released only when
// that count was 1. StillHeld leaves the count one lower on every node that
// answered having held it (setting nodes that were behind; never one where
// it was absent), and needs Q of them; Released removes the lock from
// every node; ErrNotHeld when a quorum says owner did not hold it (absent
// counts as released with absentReleased); ErrNoQuorum when fewer than Q
// nodes that may vote answered. Nodes in restart quarantine do not vote.
//
// A node that deletes the lock keeps its lock-delay's note marked with the
// release's id (Release's marks, Lock-delay in doc.go): only Released
// after deleting it on Q nodes removes them, before it returns. A release
// that fails, answers not held, or deleted the lock on fewer nodes (late
// answers and the nodes it finishes counted: releaseRest), leaves them: the
// lock expired unreleased where it lived on. Where StillHeld gives a node
// that deleted the lock its hold back, its note follows again.
func (e *Engine) ReleaseHash(ctx context.Context, key, owner string, ttl time.Duration, latch string, latchTTL time.Duration, absentReleased bool) (HashRelease, error) {
	return e.releaseHash(ctx, key, owner, ttl, latch, latchTTL, absentReleased, "")
}

// ReleaseRW gives up one read (or write) hold of owner on read-write lock
// key (AcquireRW) with ReleaseHash's rules; a plain hash lock of that name
// counts as absent. ttl, when not 0, becomes the owner's window while it
// holds the lock still (Redisson's write unlock; its read unlock keeps the
// window). Released when the lock is then free on the nodes that answered,
// ReleasedShared when the owner's holds are gone and another holder keeps
// the lock on one of them.
func (e *Engine) ReleaseRW(ctx context.Context, key, owner string, write bool, ttl time.Duration, latch string, latchTTL time.Duration, absentReleased bool) (HashRelease, error) {
	return e.releaseHash(ctx, key, owner, ttl, latch, latchTTL, absentReleased, rwMode(write))
}

func (e *Engine) releaseHash(ctx context.Context, key, owner string, ttl time.Duration, latch string, latchTTL time.Duration, absentReleased bool, mode string) (HashRelease, error) {
	if err := reservedKey(key, latch); err != nil {
		return 0, err
	}
	if ttl != 0 || mode == "" {
		if err := e.checkTTL(ttl); err != nil {
			return 0, err
		}
	}
	unlock, err := e.keys.lock(ctx, key, owner)
	if err != nil {
		return 0, err
	}
	defer unlock()
	padded := time.Duration(0) // 0: the owner's window stays
	if ttl != 0 {
		padded = e.PaddedTTL(ttl)
	}
	op := Op{Kind: OpHashRelease, Key: key, Value: owner, TTL: padded, Aux: latch, AuxTTL: latchTTL, Mark: e.releaseMark(latch), Mode: mode}
	if absentReleased && latch != "" {
		op.N = 1 // a free lock's unlock keeps its answer in the latch, as the client's script does
	}
	t := e.start(nil, op, e.opts.NodeTimeout, false)
	t.drain()
	var answered, notHeld, latchedHeld, latchedReleased []int
	var before int64 // the owner's count: the most any voting node had
	deleted := 0     // voting nodes where this release (or, answered from its latch, an earlier attempt of it) deleted the lock
	holding := 0     // voting nodes whose latch says "still held" and where the owner holds the lock
	for j, v := range t.votes {
		if v == failed || v == skipped || !e.counts(t.idx[j], time.Now()) {
			continue
		}
		answered = append(answered, j)
		if rep := t.replies[j]; rep.N == 1 && (rep.Pre > 0 || rep.Noted) {
			deleted++ // from the latch: only where the earlier attempt's mark says it deleted the lock here
		}
		switch rep := t.replies[j]; {
		case rep.Pre < 0 && rep.N == 1:
			latchedReleased = append(latchedReleased, j)
		case rep.Pre < 0 && rep.N == 0:
			latchedHeld = append(latchedHeld, j)
			if rep.Own {
				holding++ // and the owner holds it there now
			}
		case rep.N == -1 || rep.N == -2 && !absentReleased:
			notHeld = append(notHeld, j)
		default:
			before = max(before, rep.Pre)
		}
	}
	// A Released answer from latches needs the owner to hold the lock on
	// fewer than Q nodes after it: nodes whose latch says this attempt left
	// the owner holding there, and nodes not heard from, may hold it still
	// (helper-116: two latches of "still held" beside a released one).
	mayHold := holding + len(t.votes) - len(answered)
	noQuorum := func() error {
		rerr := t.roundError(RoundRelease, ErrNoQuorum)
		rerr.Votes = len(answered) - len(notHeld)
		if len(notHeld) > len(e.nodes)-e.quorum {
			rerr.Reason = ErrNotHeld
		}
		return rerr
	}
	switch {
	case len(answered) < e.quorum || len(notHeld) > len(e.nodes)-e.quorum:
		return 0, noQuorum()
	case len(latchedHeld) > 0 && before > 0:
		return e.settleRetry(t, op, answered, holding)
	case before == 0 && len(latchedHeld) > len(latchedReleased):
		// A retried unlock: answered from the latches. An attempt writes
		// "still held" on each node before it knows whether Q gave up the
		// hold, so the answer needs Q nodes that say so and hold the lock
		// (helper-81: one latch, the lock gone elsewhere, answered 0 while
		// another owner could take it).
		if holding < e.quorum {
			return 0, noQuorum()
		}
		return StillHeld, nil
	case before == 0 && (len(latchedReleased) > 0 || absentReleased) && mayHold >= e.quorum:
		return 0, noQuorum() // a retry whose latches disagree: one may still be held on Q
	case before == 0 && (len(latchedReleased) > 0 || absentReleased):
		// A retried unlock, or Redisson 3.10.0's answer for a free lock. The
		// first attempt's marks (the same id: releaseMark) go if it deleted
		// the lock on a quorum.
		if deleted >= e.quorum {
			e.unmarkLate(t, op, e.unmark(t, op))
		}
		return Released, nil
	case before == 0:
		return 0, noQuorum()
	case before == 1:
		var rest []int // nodes that may still hold it (ahead, or not heard from) give it up too
		for j, rep := range t.replies {
			if !slices.Contains(answered, j) || rep.N == 0 && rep.Pre > 0 {
				rest = append(rest, j)
			}
		}
		e.releaseRest(t, op, rest, deleted)
		for _, j := range answered {
			if t.replies[j].Others {
				return ReleasedShared, nil // a read-write lock others hold
			}
		}
		return Released, nil
	}
	// Still held with before-1 holds: set every answering node that held it
	// and is not there (it was behind, ahead, or gave up its last hold here)
	// to it, and the latches to "still held". A node where it was absent
	// (expired there, maybe inside its lock-delay, or never granted) is
	// not given it: the lock lives on where it lived, and Q of those must
	// hold it (helper-80: absent nodes repaired over their lock-delay notes
	// brought a lock that expired on a majority back on a quorum).
	var off []int
	level := 0
	for _, j := range answered {
		if rep := t.replies[j]; rep.N == 0 && rep.Pre == before {
			level++
		} else if rep.Pre > 0 {
			off = append(off, j)
		}
	}
	if len(off) > 0 {
		set := Op{Kind: OpHashSetHolds, Key: key, Value: owner, N: before - 1, TTL: padded, Aux: latch, AuxTTL: latchTTL, Mark: op.Mark, Mode: mode}
		fix := e.start(off, set, e.opts.NodeTimeout, false)
		fix.drain()
		level += fix.nYes
	}
	if level < e.quorum {
		return 0, noQuorum()
	}
	return StillHeld, nil
}

// releaseRest finishes a Released hash release on the nodes in rest (ahead,
// or not heard from). Only where Q nodes deleted the lock was it released
// rather than expired on a majority (absent counts as not held only beyond
// N-Q): then the rest's notes go with their holds and the round's marks are
// removed. Else the rest keep their notes, marked with the release's id,
// and the deletes that answered late or that this finishing made (each
// marked: hashunhold.lua) are counted again: once Q nodes deleted it, the
// marks go (helper-80: a holder's unlock inside its lease, one holder
// paused past the node timeout, answered 1 and left the lock taken for its
// lease plus its delay).
func (e *Engine) releaseRest(t *round, op Op, rest []int, deleted int) {
	unhold := Op{Kind: OpHashUnhold, Key: op.Key, Value: op.Value, Aux: op.Aux, AuxTTL: op.AuxTTL, Mode: op.Mode}
	if deleted >= e.quorum {
		e.rollback(unhold, rest)
		e.unmarkLate(t, op, e.unmark(t, op))
		return
	}
	unhold.Mark = op.Mark
	u, _ := e.rollbackRound(unhold, rest)
	for t.arrived < len(t.votes) { // answers that came while the rest was finished
		select {
		case a := <-t.ch:
			t.add(a)
			continue
		default:
		}
		break
	}
	now := time.Now()
	var marked []int // the engine's indexes of the nodes that deleted it, marked
	for j, rep := range t.replies {
		if rep.Err == nil && rep.N == 1 && (rep.Pre > 0 || rep.Noted) && e.counts(t.idx[j], now) {
			marked = append(marked, t.idx[j])
		}
	}
	var unknown []int // nodes neither the release nor its finishing heard from
	if u != nil {
		for j, rep := range u.replies {
			switch v := u.votes[j]; {
			case slices.Contains(marked, u.idx[j]):
			case v == failed || v == skipped:
				unknown = append(unknown, u.idx[j])
			case rep.OK && e.counts(u.idx[j], now):
				marked = append(marked, u.idx[j])
			}
		}
	}
	switch {
	case len(marked) >= e.quorum:
		um := e.start(marked, e.unmarkOp(op), e.opts.NodeTimeout, false)
		um.drain()
	case len(marked)+len(unknown) >= e.quorum && noted(t):
		e.finishLate(op, marked, unknown)
	} // else the lock expired unreleased on a majority: its marks stay
}

// noted reports whether a node of the release's round kept a note marked
// (a lock-delay to end).
func noted(t *round) bool {
	for _, rep := range t.replies {
		if rep.Err == nil && rep.Noted {
			return true
		}
	}
	return false
}

// finishLate asks the nodes a release did not hear from, in the background,
// further and further apart for as long as a mark may live, whether the
// release deleted the lock there (hashunhold.lua's probe: its mark is there
// and the owner's hold is not), and removes the release's marks once Q
// nodes say so: a holder that stalled past two node timeouts (helper-81) no
// longer keeps a released lock taken for its TTL and delay. It never gives
// up a hold: outside the (key, owner) slot, the owner may hold the lock
// again by a later grant (helper-82: a late finishing deleted the owner's
// next lock on one node, and another owner took it). At most maxUnmarking
// releases do so at once, as unmarkLate.
func (e *Engine) finishLate(op Op, marked, unknown []int) {
	probe := Op{Kind: OpHashUnhold, Key: op.Key, Value: op.Value, N: -1, Mark: op.Mark}
	if e.life.Err() != nil {
		return
	}
	if !e.takeUnmarking() {
		return
	}
	if !e.monitors.Go(func() {
		defer e.unmarking.Add(-1)
		until, gap := time.Now().Add(e.ownWindow()), e.opts.NodeTimeout
		for len(unknown) > 0 && len(marked) < e.quorum && time.Now().Before(until) {
			select {
			case <-e.life.Done():
				return
			case <-time.After(gap):
			}
			r := e.start(unknown, probe, e.opts.NodeTimeout, false)
			r.drain()
			var still []int
			now := time.Now()
			for j, v := range r.votes {
				switch {
				case v == failed || v == skipped:
					still = append(still, r.idx[j])
				case r.replies[j].OK && e.counts(r.idx[j], now):
					marked = append(marked, r.idx[j])
				}
			}
			unknown, gap = still, 2*gap
		}
		if len(marked) >= e.quorum {
			um := e.start(marked, e.unmarkOp(op), e.opts.NodeTimeout, false)
			um.drain()
		}
	}) {
		e.unmarking.Add(-1) // the engine closed
	}
}

// releaseMark is the id a hash lock's release marks its lock-delay's notes
// with: one per unlock request, so that a retry answered from the latches
// (Redisson sends the same latch again) removes the marks its first attempt
// left; a new one per release without a latch.
func (e *Engine) releaseMark(latch string) string {
	if latch == "" {
		return e.newRoundID()
	}
	h := sha1.Sum([]byte(latch))
	return "L" + hex.EncodeToString(h[:8])
}
