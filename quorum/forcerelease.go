package quorum

import (
	"context"
	"slices"
	"strings"
	"time"
)

// A force release (DEL, Redisson's forceUnlock) deletes a lock whoever holds
// it. It is two rounds: the first reads each node's print of the key
// (OpPrint: a digest of every key the delete would remove, with its content
// and expiry time), the second deletes the key on every node where it still
// prints as one of the prints read (OpDel). A copy of the delete that lands
// late, after the release was answered and the key was taken again, finds
// another print there and deletes nothing: a single delete round would wipe
// the new holder's copies there (a holder granted by C, D, E, after a DEL
// answered by A, B, C, would keep only C), and a third client could then be
// granted beside it. A node whose print changed between the rounds (an
// extend, a re-entry, a new grant) is read and deleted again, up to
// forceReleaseTries passes; a lock that changes on more than N-Q nodes in
// each of them fails the release with NOQUORUM (fewer than Q nodes deleted
// it or had nothing).

// forceReleaseTries bounds the read-and-delete passes of one force release.
const forceReleaseTries = 3

// ForceRelease deletes key on every node whatever it holds (DEL). It reports
// whether key existed on a quorum. It waits for every node, and fails with
// ErrNoQuorum when fewer than Q answered.
func (e *Engine) ForceRelease(ctx context.Context, key string) (bool, error) {
	return e.forceRelease(ctx, key, "")
}

// ForceReleaseRW deletes read-write lock key (AcquireRW) where it is read
// (or written), as ForceRelease does: Redisson's forceUnlock of a
// readLock() or writeLock().
func (e *Engine) ForceReleaseRW(ctx context.Context, key string, write bool) (bool, error) {
	return e.forceRelease(ctx, key, rwMode(write))
}

func (e *Engine) forceRelease(ctx context.Context, key, mode string) (bool, error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	deleted := make([]bool, len(e.nodes)) // where a pass deleted the lock
	existed := func() bool {
		n := 0
		for _, d := range deleted {
			if d {
				n++
			}
		}
		return n >= e.quorum
	}
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		prints, gens, err := e.lockPrints(key, mode, RoundDelete)
		if err != nil {
			return false, err
		}
		if len(prints) == 0 {
			return existed(), nil // nothing (left) there on the nodes that answered
		}
		del := Op{Kind: OpDel, Key: key, Mode: mode, Value: strings.Join(prints, " "), Aux: strings.Join(gens, " ")}
		t := e.start(nil, del, e.opts.NodeTimeout, false)
		t.drain()
		changed := 0
		for j, v := range t.votes {
			switch {
			case v == yes:
				deleted[t.idx[j]] = true
			case v == no && t.replies[j].N < 0:
				changed++
			}
		}
		settled := t.nYes + t.nNo - changed // deleted, or nothing there
		if settled >= e.quorum {
			return existed(), nil
		}
		if changed == 0 || try == forceReleaseTries {
			rerr := t.roundError(RoundDelete, ErrNoQuorum)
			rerr.Votes = settled
			return false, rerr
		}
	}
}

// lockPrints reads key's print on every node (OpPrint, waiting for each):
// the distinct prints of the nodes that answered in time, and the
// generations of a semaphore of that name; ErrNoQuorum (a round of kind)
// when fewer than Q answered.
func (e *Engine) lockPrints(key, mode string, kind RoundKind) (prints, gens []string, err error) {
	read := e.start(nil, Op{Kind: OpPrint, Key: key, Mode: mode}, e.opts.NodeTimeout, false)
	read.drain()
	if read.nYes < e.quorum {
		rerr := read.roundError(kind, ErrNoQuorum)
		rerr.Votes = read.nYes
		return nil, nil, rerr
	}
	prints, gens = printsOf(read)
	return prints, gens, nil
}

// whoeverHolds runs an extend round of op, which acts on lock key whoever
// holds it (Overwrite, LeaseHash), after a round that read the lock's
// prints (lockPrints): op lands only where the lock still prints so
// (op.Mark carries them), and a late copy of it never reaches a lock taken
// since. A lock that changes between the two rounds (an extend of its
// holder's) is not acted on there.
func (e *Engine) whoeverHolds(ctx context.Context, op Op, ttl time.Duration) (Grant, error) {
	if err := reservedKey(op.Key); err != nil {
		return Grant{}, err
	}
	if err := ctx.Err(); err != nil {
		return Grant{}, err
	}
	prints, _, err := e.lockPrints(op.Key, "", RoundExtend)
	if err != nil {
		return Grant{}, err
	}
	op.Mark = strings.Join(prints, " ")
	if op.Mark == "" {
		op.Mark = "-" // nothing there: nothing matches
	}
	return e.extend(ctx, op, ttl)
}

// printsOf is the distinct prints the nodes of OpPrint round t answered,
// in time or late but before the round gave up on them ("" left out:
// nothing there), and the semaphore generations. A node that never
// answered is not deleted (nothing it holds is known): its lock lapses
// with its TTL, a semaphore's number stays there (a minority's number
// grants nothing) until a later DEL reaches it.
func printsOf(t *round) (prints, gens []string) {
	for j := range t.votes {
		if t.replies[j].Err != nil {
			continue
		}
		if p := t.replies[j].Entry.Value; p != "" && !slices.Contains(prints, p) {
			prints = append(prints, p)
		}
		if g := t.replies[j].Entry.Round; g != "" && !slices.Contains(gens, g) {
			gens = append(gens, g)
		}
	}
	return prints, gens
}
