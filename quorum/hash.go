package quorum

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// free: the holder's PTTL as the caller should see it (a fair
	// acquire's: or until the waiter ahead's place lapses).
	Wait time.Duration
	// Queued: a fair acquire's owner keeps its place in the queue: a
	// quorum answered the same ticket for it (AcquireFair).
	Queued bool
}

// Unwrap lets errors.Is see ErrTaken.
func (h *HashTaken) Unwrap() error { return h.RoundError }

// AcquireHash takes or re-enters the hash lock key for owner with ttl (padded
// for drift) on a quorum, with Acquire's rules. With tokenKey it is a fenced
// grant: each node counts the grant in the counter the client named
// tokenKey (LockCounterKey, in the engine's names), the Grant's Token is the
// largest count among a quorum of intact nodes (see fencingdoc.go), and before AcquireHash returns a quorum of intact nodes' counters
// are raised to it, so every later grant gets a larger one.
//
// Hold counts: a node that missed a round (down, or slow) keeps a stale
// count. The count a grant leaves is the largest any granting node reports,
// and nodes below it are set to it before the grant stands, so that a
// quorum always holds at least the count the owner was told about.
//
// The lock keeps Settings.LockDelay as a SET NX PX lock does (Lock-delay in
// doc.go): each node's note outlives its hash by it, extends and re-entries
// included.
//
// On failure the holds this round added are given back. A lock another owner
// holds fails with a *HashTaken (errors.Is ErrTaken).
func (e *Engine) AcquireHash(ctx context.Context, key, owner string, ttl time.Duration, tokenKey string) (Grant, error) {
	return e.acquireHash(ctx, key, owner, ttl, tokenKey, "")
}

// AcquireRW takes or re-enters read-write lock key (Redisson's
// RReadWriteLock) for owner, reading or writing, with AcquireHash's rules
// (no token). Readers share it; a writer holds it alone but for its own
// thread's reads (owner + ":write" is the writer's name of reader owner's
// thread; a writer's name that does not end so is ErrWriterName). A node
// grants a read where the lock is free, read, or written by the reader's
// own thread, and a write where it is free or the writer's own; any two
// quorums share a node, where these exclude each other (Read-write locks in
// doc.go). Each holder's hold ends at its own time (HoldersKey).
func (e *Engine) AcquireRW(ctx context.Context, key, owner string, write bool, ttl time.Duration) (Grant, error) {
	if write && !strings.HasSuffix(owner, ":write") {
		return Grant{}, ErrWriterName
	}
	return e.acquireHash(ctx, key, owner, ttl, "", rwMode(write))
}

func rwMode(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

func (e *Engine) acquireHash(ctx context.Context, key, owner string, ttl time.Duration, tokenKey, mode string) (Grant, error) {
	return e.acquireHashOp(ctx, Op{Kind: OpHashAcquire, Key: key, Value: owner, Aux: tokenKey, Mode: mode}, ttl)
}

// acquireHashOp runs an OpHashAcquire round of op (Key, Value, Aux, Mode,
// and for a fair acquire Fair and N: AcquireFair), with ttl.
func (e *Engine) acquireHashOp(ctx context.Context, op Op, ttl time.Duration) (Grant, error) {
	key, owner, mode := op.Key, op.Value, op.Mode
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	if err := reservedKey(op.Aux); err != nil && !op.Fair { // a fair queue is in the proxy's names (fairQueue)
		return Grant{}, err
	}
	if owner == "mode" {
		return Grant{}, ErrModeOwner
	}
	tokenKey := ""
	if !op.Fair && op.Aux != "" {
		op.Aux = LockCounterKey(op.Aux)
		tokenKey = op.Aux
	}
	op.AuxTTL, op.Round = e.opts.LockDelay, e.newRoundID()
	r, err := e.startTimed(ctx, op, ttl)
	if err != nil {
		return Grant{}, err
	}
	g, rerr := e.verdict(r, RoundAcquire)
	voted := rerr == nil // a failure after the vote (levelling, fencing) is described as it is
	if voted {
		rerr = e.levelHolds(r, key, owner, mode)
	}
	if rerr == nil && tokenKey != "" {
		g, rerr = e.fence(r, tokenKey, g, Op{})
	}
	undo := Op{Kind: OpHashUnhold, Key: key, Value: owner, N: 1, Mode: mode}
	if rerr == nil {
		if op.Fair {
			e.leftQueue(r.round, op) // it holds the lock: its place elsewhere would block the next waiter
		}
		return e.grant(r, g, undo, (*round).granted), nil
	}
	defer r.unlock()
	r.drain()
	if !voted {
		rerr = e.judgeAgain(r, RoundAcquire, rerr)
	}
	// Only nodes that said they granted give a hold back: on a node that did
	// not answer, the hold may be one the owner already had.
	granted := r.granted()
	rerr.addNodeErrs(e.rollback(undo, granted))
	queued := op.Fair && e.requeue(r.round, op) // else it queues again at the back (AcquireFair)
	if rerr.Reason != ErrTaken {
		return Grant{}, rerr
	}
	e.contended(key)
	return Grant{}, &HashTaken{RoundError: rerr, Wait: e.holderWait(r.round), Queued: queued}
}

// granted lists the nodes whose answer says the round's hold was added.
func (t *round) granted() []int {
	var idx []int
	for j, rep := range t.replies {
		if rep.Err == nil && rep.OK {
			idx = append(idx, j)
		}
	}
	return idx
}

// levelHolds sets every granting node whose hold count is below the
// largest reported to that count, and fails the round unless a quorum then
// holds it: the owner's count on a quorum is never below what it was told.
func (e *Engine) levelHolds(r *timedRound, key, owner, mode string) *RoundError {
	var target int64
	for j, v := range r.votes {
		if v == yes {
			target = max(target, r.replies[j].N)
		}
	}
	level, behind := 0, []int(nil)
	for j, v := range r.votes {
		switch {
		case v != yes:
		case r.replies[j].N == target:
			level++
		default:
			behind = append(behind, j)
		}
	}
	if len(behind) > 0 {
		t := e.start(behind, Op{Kind: OpHashSetHolds, Key: key, Value: owner, N: target, TTL: e.PaddedTTL(r.ttl), Mode: mode}, e.lockTimeout(r.ttl), false)
		t.drain()
		level += t.nYes
	}
	if level < e.quorum {
		rerr := r.roundError(RoundAcquire, ErrNoQuorum)
		rerr.Votes = level
		return rerr
	}
	return nil
}

// holderWait is, from the PTTLs the taken nodes reported, how long until
// enough of them expire that a quorum could be free, in the holder's terms:
// the backends' TTLs are padded for drift, the holder's window is not.
func (e *Engine) holderWait(t *round) time.Duration {
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
	return e.holderTerms(ttls[i])
}

// The ways LeaseHash sets a TTL.
const (
	LeaseMax = iota // never shorter: a lease anyone may send cannot cut a holder's window
	LeaseSet        // exactly, as PEXPIRE: a shorter one is a force release
	LeaseMin        // only shorter (PEXPIRE's LT): a force release
)

// LeaseHash sets the TTL of hash lock key to ttl (padded) as how says
// (LeaseMax, LeaseSet, LeaseMin) on every node where it is a lock, whoever
// holds it: RedissonMultiLock's lease, sent after it took its members,
// names no owner. ErrNotHeld when a quorum did not set it. Extend's other
// rules. One that may shorten the lock is a force release: it acts only on
// the lock a first round read (whoeverHolds).
func (e *Engine) LeaseHash(ctx context.Context, key string, ttl time.Duration, how int64) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	if how != LeaseMax { // it may shorten a lock: only the lock read (whoeverHolds)
		return e.whoeverHolds(ctx, Op{Kind: OpHashLease, Key: key, N: how}, ttl)
	}
	return e.extend(ctx, Op{Kind: OpHashLease, Key: key, N: how}, ttl)
}

// ExtendHash sets the TTL of hash lock key to ttl (padded) on every node
// where owner holds it, with Extend's rules.
func (e *Engine) ExtendHash(ctx context.Context, key, owner string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.extend(ctx, Op{Kind: OpHashExtend, Key: key, Value: owner}, ttl)
}

// ReadField reads field of hash key like Read reads a key: the value a
// quorum holds, and the conservative TTL of the key. With presence, only
// whether a quorum has the field counts, not its value (hold counts may
// differ between nodes).
func (e *Engine) ReadField(ctx context.Context, key, field string, presence bool) (Entry, error) {
	if err := reservedKey(key); err != nil {
		return Entry{}, err
	}
	return e.read(ctx, Op{Kind: OpHashGet, Key: key, Value: field}, false, presence)
}

// ReadCounter reads the fencing counter a fenced hash lock's client named
// key (LockCounterKey): the Q-th largest value among intact nodes (see
// fencingdoc.go), which a quorum has reached. A node without it counts 0.
// It waits for every node; fewer than Q intact answers is ErrNoQuorum,
// never a smaller value.
func (e *Engine) ReadCounter(ctx context.Context, key string) (int64, error) {
	if err := reservedKey(key); err != nil {
		return 0, err
	}
	key = LockCounterKey(key)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := e.start(nil, Op{Kind: OpRead, Key: key}, e.opts.NodeTimeout, false)
	t.drain()
	var values []int64
	for j, v := range t.votes {
		if v == failed || v == skipped || !t.intact(j) {
			continue
		}
		n, _ := strconv.ParseInt(t.replies[j].Entry.Value, 10, 64)
		values = append(values, n)
	}
	if len(values) < e.quorum {
		rerr := t.roundError(RoundRead, ErrNoQuorum)
		rerr.Votes = len(values)
		rerr.addNodeErrs(e.unrepaired())
		return 0, rerr
	}
	slices.Sort(values)
	return values[len(values)-e.quorum], nil
}

// ReadLocked reports whether a quorum has read-write lock key read-locked:
// read, or written by a thread that also reads it (Redisson 3.52's
// readLock().isLocked()), with ReadField's rules.
func (e *Engine) ReadLocked(ctx context.Context, key string) (bool, error) {
	if err := reservedKey(key); err != nil {
		return false, err
	}
	en, err := e.read(ctx, Op{Kind: OpHashGet, Key: key, N: 1}, false, true)
	return en.Found, err
}
