package quorum

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Acquire sets key to value with ttl on a quorum of nodes (SET NX PX with the
// TTL padded for clock drift). It succeeds only if Q nodes agreed and more
// than the minimum validity is left of ttl. A lock of key that expired
// unreleased less than lock_delay ago counts as held (Settings.LockDelay).
//
// On failure it removes value from every node where it may have landed, and
// returns only once that rollback finished. The error is a *RoundError whose
// Reason is ErrTaken (held by another value on enough nodes that Q cannot be
// reached), ErrNoQuorum or ErrValiditySpent; or ctx's error if ctx ended while
// waiting for an earlier round of the same (key, value).
func (e *Engine) Acquire(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.acquire(ctx, Op{Kind: OpSetNX, Key: key, Value: value, AuxTTL: e.opts.LockDelay}, ttl)
}

// AcquireFenced is Acquire with a fencing token (Grant.Token): larger than
// the token of every fenced grant before it, of this key or any other, and
// noted beside the lock on a quorum (Token reads it). It costs a second
// round: the raise of a quorum's counter (see fencingdoc.go).
// It waits its turn: while key has waiters (Enqueue) it is refused as if
// the lock were held. Its lock-delay is Settings.NativeLockDelay.
func (e *Engine) AcquireFenced(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	return e.AcquireWaiting(ctx, key, value, ttl)
}

// AcquireSession is AcquireWaiting for a SESSION lock, which the caller
// renews while its connection lives: the round's id carries SessionMark,
// noted beside the lock, so that no extend shortens it (extend.lua) below
// what the session's renewals keep.
func (e *Engine) AcquireSession(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.acquire(ctx, Op{Kind: OpSetNX, Fair: true, Key: key, Value: value, Aux: TokenKey, AuxTTL: e.opts.NativeLockDelay,
		Round: e.newRoundID() + SessionMark}, ttl)
}

// AcquireWaiting is AcquireFenced for a waiter queued with Enqueue under
// its owner's name, value: it may set the lock only where value is at the
// head of key's queue. When the
// lock is taken (or it is not waiter's turn) the *RoundError's RetryIn says
// when trying again may succeed at the earliest: the holder's TTL or
// lock-delay, or the lease of the waiter ahead. The waiter leaves the
// queue with its release (ReleaseFair), or when its lease ends.
func (e *Engine) AcquireWaiting(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.acquire(ctx, Op{Kind: OpSetNX, Fair: true, Key: key, Value: value, Aux: TokenKey, AuxTTL: e.opts.NativeLockDelay}, ttl)
}

// AcquireBound is Acquire for a lock its holder means to keep until it
// releases it (SET NX without a TTL): the proxy renews it while the client's
// connection lives (a connection-bound lock), and ttl is its lease. The
// round's id carries BoundMark, noted beside the lock on every node like any
// round's id, so that every replica's Read tells it is bound (Entry.Bound)
// and answers PTTL -1 as one Redis would.
func (e *Engine) AcquireBound(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.acquire(ctx, Op{Kind: OpSetNX, Key: key, Value: value, AuxTTL: e.opts.LockDelay, Round: e.newRoundID() + BoundMark}, ttl)
}

// BoundMark ends the round id of a connection-bound lock (AcquireBound),
// SessionMark a SESSION lock's (AcquireSession, Reattach): a lock a session
// renews, which no extend shortens.
const (
	BoundMark   = "~"
	SessionMark = "@"
)

// Bound reports whether a read string lock was taken by AcquireBound: the
// round its holders carry is marked so.
func (v Entry) Bound() bool { return strings.HasSuffix(v.Round, BoundMark) }

// acquire runs an acquire round of op, an OpSetNX (fenced when Aux names a
// token counter), with a new round id unless op names one.
func (e *Engine) acquire(ctx context.Context, op Op, ttl time.Duration) (Grant, error) {
	if op.Round == "" {
		op.Round = e.newRoundID()
	}
	key, value, fenced := op.Key, op.Value, op.Aux != ""
	r, err := e.startTimed(ctx, op, ttl)
	if err != nil {
		return Grant{}, err
	}
	undo := Op{Kind: OpUndo, Key: key, Value: value, Round: op.Round}
	g, rerr := e.verdict(r, RoundAcquire)
	voted := rerr == nil // a failure after the vote (fencing) is described as it is
	if voted && fenced {
		g, rerr = e.fence(r, TokenKey, g, op)
	}
	if rerr == nil {
		return e.grant(r, g, undo, (*round).maybeWrote), nil
	}
	defer r.unlock()
	// Wait for every node, so that nothing still in flight lands after the
	// rollback, and describe the failure with every answer in: the reply
	// names each node and tells "taken" from "sick" on all of them.
	r.drain()
	if !voted {
		rerr = e.judgeAgain(r, RoundAcquire, rerr)
	}
	if op.Fair && errors.Is(rerr.Reason, ErrTaken) {
		rerr.RetryIn = r.retryIn()
	}
	if errors.Is(rerr.Reason, ErrTaken) {
		e.contended(key)
	}
	rerr.addNodeErrs(e.rollback(undo, r.maybeWrote()))
	return Grant{}, rerr
}

// Extend sets key's TTL to ttl (padded for drift) on every node where it
// holds value, never shortening a lock a session renews (its round carries
// BoundMark or SessionMark). Like Acquire it needs Q agreeing nodes
// and more than the minimum validity left; unlike Acquire it rolls nothing
// back: a partly extended lock only delays other owners until its TTL.
// Errors as for Release, plus ErrValiditySpent.
//
// The lock keeps its round: a session (or connection-bound) lock extended
// from another connection stays its session's, renewed while that
// connection lives, so an extend that fails, lapses or reaches only some
// nodes changes nothing its holder counts on. Where it extends the lock it
// also pins its promise (PinKey): the release at the close of the session's
// connection, and the rollback of the acquire that took it, leave the lock
// to its TTL while the pin lasts, so the window this extend answers for
// holds whichever connection closes.
func (e *Engine) Extend(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.extend(ctx, Op{Kind: OpPExpireIfEq, Key: key, Value: value, N: 1}, ttl)
}

// ExtendRound is Extend for the connection a session lock is booked on:
// only where the lock's note still names round (the round it booked), and
// without a pin, so the lock stays that connection's session lock through
// and through: released when that connection closes, as its holder asked.
func (e *Engine) ExtendRound(ctx context.Context, key, value string, ttl time.Duration, round string) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	return e.extend(ctx, Op{Kind: OpPExpireIfEq, Key: key, Value: value, Round: round}, ttl)
}

// Overwrite sets key to value with ttl (padded) on every node where key is
// a lock (a string with a TTL), whoever holds it: SET XX PX, by which
// ShedLock keeps its lock until lockAtLeastFor. Extend's rules; a quorum
// without such a key fails with ErrNotHeld. Where the lock already holds
// value, it keeps its round (and session) and pins its promise as Extend
// does, unless the lock's note names booked (the round the sending
// connection booked, "" when none): then the overwrite is that session's
// own, released at its close as ExtendRound's extend is. It acts only on
// the lock a first round read (whoeverHolds).
func (e *Engine) Overwrite(ctx context.Context, key, value string, ttl time.Duration, booked string) (Grant, error) {
	return e.whoeverHolds(ctx, Op{Kind: OpSetXX, Key: key, Value: value, Round: e.newRoundID(), Aux: booked, AuxTTL: e.opts.LockDelay}, ttl)
}

// OverwriteIfEq sets key to value with ttl (padded) on every node where
// it holds held (compare-and-set): a holder replaces its own value, and
// never a lock that passed to another owner since it last looked.
// Extend's rules; a quorum not holding held fails with ErrNotHeld.
func (e *Engine) OverwriteIfEq(ctx context.Context, key, held, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	if held == "" {
		return Grant{}, ErrNotHeld
	}
	return e.extend(ctx, Op{Kind: OpSetXX, Key: key, Value: value, IfEq: held, Round: e.newRoundID(), AuxTTL: e.opts.LockDelay}, ttl)
}

// extend runs an extend round of op with Extend's rules.
func (e *Engine) extend(ctx context.Context, op Op, ttl time.Duration) (Grant, error) {
	r, err := e.startTimed(ctx, op, ttl)
	if err != nil {
		return Grant{}, err
	}
	g, rerr := e.verdict(r, RoundExtend)
	if rerr != nil && rerr.Reason == ErrNoQuorum {
		// Decided early: wait for the rest until enough trusted nodes say
		// "not held" to tell the caller so (see trustedNo).
		r.drainUntil(func() bool { return r.trustedNo(RoundExtend) > len(r.votes)-r.quorum })
		rerr = e.judgeAgain(r, RoundExtend, rerr)
	}
	r.finish(r.unlock)
	if rerr != nil {
		// Sent: where it landed, it wrote its round, for the caller's
		// window (Reattach books it).
		return Grant{Round: r.id, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity)}, rerr
	}
	return g, nil // nothing to revoke: see Grant.Revoke
}

// grant hands out an acquire's grant: Revoke undoes the round's writes with
// undo on the nodes where reports, once the round's stragglers are in. The
// round's (key, value) slot is freed when they are.
func (e *Engine) grant(r *timedRound, g Grant, undo Op, where func(*round) []int) Grant {
	g.revoke = &revocation{e: e, t: r.round, undo: undo, where: where}
	r.finish(r.unlock)
	return g
}

// revocation is what Grant.Revoke undoes: round t's writes, with undo, on
// the nodes where lists, once its stragglers are in.
type revocation struct {
	e     *Engine
	t     *round
	undo  Op
	where func(*round) []int
}

func (v *revocation) run() {
	v.t.settled.Wait()
	v.e.rollback(v.undo, v.where(v.t))
}

// rollback undoes an acquire on the given nodes with op (deleting what its
// own round wrote, or giving up one hold of a hash lock) and waits for all
// of them. It owes nothing to the caller's context: it completes even when
// the client that asked is gone. Nodes that answered "taken" are skipped:
// the round wrote nothing there. A failed rollback leaves a key that expires
// with its TTL; it is reported and logged.
func (e *Engine) rollback(op Op, idx []int) *multierror.Error {
	_, errs := e.rollbackRound(op, idx)
	return errs
}

// rollbackRound is rollback that also returns its round (nil when idx is
// empty), whose replies say what each node did.
func (e *Engine) rollbackRound(op Op, idx []int) (*round, *multierror.Error) {
	if len(idx) == 0 {
		return nil, nil
	}
	e.rollbacks.Add(1)
	t := e.start(idx, op, e.opts.NodeTimeout, false)
	t.drain()
	var errs *multierror.Error
	for j, v := range t.votes {
		if v != failed && v != skipped {
			continue
		}
		addr := e.nodes[idx[j]].Addr()
		e.rollbackFailures.Add(1)
		attrs := []any{"node", addr, "err", t.errs[j]}
		if e.opts.logValues {
			attrs = append(attrs, "key", op.Key, "value", op.Value)
		}
		e.opts.logger.Warn("rollback failed; the key expires with its TTL", attrs...)
		errs = multierror.Append(errs, &NodeError{Addr: addr, Err: errString("its rollback failed (" + describe(t.errs[j]) + "): the key expires with its TTL")})
	}
	return t, errs
}

// startTimed waits for op's (key, value) slot, sends op (an acquire or
// extend) with the padded TTL to every node and collects votes until the
// round is decided.
func (e *Engine) startTimed(ctx context.Context, op Op, ttl time.Duration) (*timedRound, error) {
	if err := e.checkTTL(ttl); err != nil {
		return nil, err
	}
	start := arrival(ctx)
	unlock, err := e.keys.lock(ctx, op.Key, op.Value)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil && op.Kind == OpReattach {
		unlock()
		return nil, err // its caller hung up while it waited: nothing sent (Reattach); once sent, nothing here heeds ctx
	}
	need := e.opts.MinValidity
	if op.Kind == OpReattach {
		// A re-attach cannot be undone: one that moved the lock and was
		// then judged validity-spent would leave it booked nowhere. Sent
		// only while the window outlasts the round's longest wait.
		need += e.lockTimeout(ttl)
	}
	if spent := time.Since(start); ttl-spent <= need {
		// Queued past the caller's window: send nothing (an extend sent now
		// could shorten a lock while its reply says it failed).
		unlock()
		return nil, &RoundError{Op: kindOf(op.Kind), Reason: ErrValiditySpent, Nodes: len(e.nodes), Quorum: e.quorum, Spent: spent}
	}
	op.TTL = e.PaddedTTL(ttl)
	op.Pad = op.TTL - ttl
	t := e.start(nil, op, e.lockTimeout(ttl), true)
	t.collect()
	return &timedRound{round: t, unlock: unlock, ttl: ttl, start: start, elapsed: time.Since(start), id: op.Round}, nil
}

// verdict grants the round if Q nodes agreed with more than the minimum
// validity left; otherwise it says why not.
func (e *Engine) verdict(r *timedRound, kind RoundKind) (Grant, *RoundError) {
	switch {
	case r.nYes >= e.quorum && r.ttl-r.elapsed > e.opts.MinValidity:
		return Grant{Validity: r.ttl - r.elapsed, Votes: r.nYes, ReplyBy: r.start.Add(r.ttl - e.opts.MinValidity), Round: r.id}, nil
	case r.nYes >= e.quorum:
		rerr := r.roundError(kind, ErrValiditySpent)
		rerr.Spent = r.elapsed
		return Grant{}, rerr
	}
	return Grant{}, r.roundError(kind, r.failure(kind))
}

// judgeAgain describes a failed round once every answer is in: late answers
// may sharpen the reason (taken rather than sick) and name every node, but a
// round that failed never becomes a grant, however its late votes fall.
func (e *Engine) judgeAgain(r *timedRound, kind RoundKind, first *RoundError) *RoundError {
	if first.Reason == ErrValiditySpent {
		return first
	}
	return r.roundError(kind, r.failure(kind))
}

// kindOf is the kind of round an op starts.
func kindOf(k OpKind) RoundKind {
	if k == OpSetNX || k == OpHashAcquire {
		return RoundAcquire
	}
	return RoundExtend
}

// contended reports a round that found key taken to the WithContention hook.
func (e *Engine) contended(key string) {
	if e.opts.contended != nil {
		e.opts.contended(key)
	}
}
