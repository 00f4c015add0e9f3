package quorum

import (
	"context"
	"errors"
	"time"
)

// Node is one independent Redis master as the engine sees it: a queue of
// single-node lock operations. backend.Node implements it over go-redis,
// batching the operations of many rounds into one pipelined write; tests
// implement it with injected faults.
//
// Do must not block: it queues op and the node later calls done exactly
// once (done.Done), from any goroutine. The node should answer by deadline; the engine
// stops counting on it then, but still waits for its late answer before it
// rolls back or lets the same owner start another round.
// Done takes a node's answer to one operation (Node.Do). A round hands its
// nodes one slot each of a value it allocates once (round.go: delivery),
// not a closure per node; DoneFunc makes a func one.
type Done interface{ Done(Reply) }

// DoneFunc is a func as a Done.
type DoneFunc func(Reply)

// Done calls f.
func (f DoneFunc) Done(r Reply) { f(r) }

type Node interface {
	// Addr names the node in errors, logs and INFO.
	Addr() string
	Do(op Op, deadline time.Time, done Done)
	// Info reads the node's identity and persistence; the engine's health
	// monitor calls it, off the lock path.
	Info(ctx context.Context) (NodeInfo, error)
	// Keys lists up to limit keys that start with prefix (SCAN); the admin
	// view uses it, off the lock path.
	Keys(ctx context.Context, prefix string, limit int) ([]string, error)
	// Watch registers f, which the node calls with fresh NodeInfo each time
	// it opens a connection, before that connection carries any operation:
	// a backend that restarted is known as such before it can vote.
	Watch(f func(NodeInfo))
	// Record raises the backend's record of the longest padded TTL (plus
	// lock-delay) any engine may grant (a key without expiry) to at least ttl and returns
	// the record as it stands; in the same step it sets engine's presence
	// (EngineKey, EngineKeyTTL) to seq and returns the value it had (prev,
	// 0: none). Off the lock path.
	Record(ctx context.Context, ttl time.Duration, engine string, seq int64) (record time.Duration, prev int64, err error)
	// Counters lists the backend's fencing token counters and their values.
	// Off the lock path: repairs call it.
	Counters(ctx context.Context) (map[string]int64, error)
	// Repair raises each counter to at least its value in counters, then
	// marks the backend intact with marker (NewMarker: its run_id and a
	// marking's id; NodeInfo.Intact) unless a marker of that run is there
	// already; and only where the marker there is still expect (the one
	// the engine last read, "" none), else it reports ErrMarkerChanged (a
	// flush since: the engine's next check judges it; so too when the
	// backend was flushed while the repair ran). With floor > 0, the
	// step that marks it also raises TokenKey and every lock counter the
	// backend lists (LockCounterKey: one a try made after the engine read
	// the counters too) to at least floor. Off the lock path.
	Repair(ctx context.Context, marker, expect string, counters map[string]int64, floor int64) error
	// MarkNew marks a backend of a new deployment with marker (NewMarker) and
	// raises TokenKey and every lock counter it lists to at least seed
	// (Bootstrap), in one step and only where it carries no marker and no
	// max-TTL record; else it changes nothing and reports ErrNotNew. Off the
	// lock path.
	MarkNew(ctx context.Context, marker string, seed int64) error
	// Close stops the node; operations still queued fail.
	Close() error
}

// NodeInfo identifies one run of a backend.
type NodeInfo struct {
	RunID  string        // changes when the backend restarts
	Uptime time.Duration // since it started
	// Persistent: every write is fsynced before it is acknowledged
	// (appendonly yes, appendfsync always), so a restart loses no lock.
	Persistent bool
	// Intact: the backend carries the intact marker of its current run:
	// it has been up without a break since an engine marked it (after its
	// quarantine, or at a new deployment's bootstrap), so it holds every
	// lock and fencing counter written since. A marker of an earlier run (a
	// restart that restored a snapshot) does not count.
	Intact bool
	// Marked: it carries a marker, of this run or an earlier one.
	Marked bool
	// Marker is the marker as it stands ("" none): its run_id and the id
	// of the marking (NewMarker). One that changes under the same run was
	// lost (the backend was flushed, or its keys deleted) and written again.
	Marker string
	// MaxTTL is the backend's record of the longest padded TTL (plus
	// lock-delay) any engine may grant; 0 when none was written.
	MaxTTL time.Duration
}

// OpKind is what a single-node operation does.
type OpKind uint8

// The single-node operations a round is made of.
const (
	OpSetNX       OpKind = iota + 1 // SET Key Value NX PX TTL, noting Round and Pad beside it; OK: it was set. With Aux (a token counter): also INCR it, noting the count beside the lock and Round as its writer; Token: the count
	OpDelIfEq                       // delete Key if it holds Value (with Round: and its note names Round, and no extend pinned it, PinKey); with Mark, a note that outlives the lock (a lock-delay) is kept as "!Mark" (Noted) for OpUnmark; OK: deleted
	OpPExpireIfEq                   // set Key's TTL (never shorter for a lock a session renews: BoundMark, SessionMark) if it holds Value and the holder's window is open (with a Round, only where the lock's note names it; with N 1, also pin the promise, PinKey); OK: done
	OpUndo                          // delete Key if it holds Value written by Round and no extend pinned it (a rollback); OK: deleted
	OpRead                          // Key's value and TTL in one snapshot: Entry (with Token, the token noted beside a fenced lock)
	OpDel                           // force release: delete Key (and its note, pin, holders, semaphore) where its print (OpPrint) is one of Value's, space separated; OK: it existed, N -1: something else is there now
	OpSetXX                         // overwrite lock Key (a string with a TTL) with Value, TTL (with IfEq: only where Key holds IfEq); the same value keeps the round and pins (PinKey) for TTL unless the note names Aux (the sender's booked round), another drops the pin; OK: done

	// Reentrant hash locks (Redisson's layout: Key is a hash of owner -> holds).
	OpHashAcquire  // take or re-enter Key for owner Value, TTL; Aux: token counter to INCR, noting Round as its writer (Fair: Aux names the fair queue instead, N the waiter's lease in ms: see Fair). OK: held; N: holds, else ms to wait; Own: refused, Value is queued; Fair: Token is Value's ticket, where it was queued (granted: the one it left the queue with)
	OpHashRelease  // give up one hold; Aux: unlock latch kept AuxTTL (with N 1, written "1" where the lock is absent: a client whose unlock of a free lock answers 1 keeps that). N: 1 released, 0 still held, -1 other owner, -2 absent
	OpHashExtend   // set Key's TTL while Value holds it; OK: done
	OpHashUnhold   // undo one hold (N 1) or all holds (N 0) of Value (with Mark, marking the note); N -1 only asks whether release Mark deleted it there; OK: deleted (by this op, or by release Mark before)
	OpHashGet      // field Value of hash Key and the key's TTL: Entry
	OpRaise        // raise counter Key to at least N, noting Round as its writer where it raised; with Aux (a fenced lock held by Value, written by Round), note N beside it: tentative with Tentative (a first raise), else final. OK: done, N: the counter before, Own: Round wrote it, Noted: the lock's token was noted
	OpHashSetHolds // set owner Value's holds to N where Key is free or Value holds it, TTL; OK: done

	OpRenew // extend each of Leases as OpPExpireIfEq does, never shortening (Key, Value, TTL and Pad ignored; a Lease with a Round only where the lock's note names it); with N 1 also restore a lease where its key and note are both absent, or its key is absent under its own round's note (the restore is not counted; its note outlives the key by the lock-delay: AuxTTL for a fenced lock's, TTL for the others'), and adopt one whose note names an earlier round of the lock with its token; Each: per lease, extended

	// OpFixToken raises counter Key to at least N as OpRaise does and, where
	// lock Aux holds Value written by Round and has no token yet, fixes N
	// beside it (set if absent: a token fixed on a node never changes).
	// OK: done, N: the counter before, Own as OpRaise; Token: the token
	// fixed beside the lock there now (N or an earlier fixer's), 0 when the
	// node does not hold the lock or it is a fenced lock. With N 0 nothing
	// is written: the counter and the fixed token are read.
	OpFixToken

	// Fair queues (QueueKey): Key is the lock's key, Value the waiter.
	OpQueueTail // N: the largest ticket in Key's queue, 0 when empty
	OpEnqueue   // add Value with ticket N (unless queued already; Fair: or with another ticket) and a lease of TTL; OK: done
	OpQueueBeat // renew Value's lease for TTL; OK: it is still queued
	OpDequeue   // remove Value from the queue (with N: only its place with ticket N); OK: it was there
	OpQueueHead // Entry.Value: the first waiter whose lease has not ended (Found: there is one); writes nothing
	// OpQueueBeats renews many waiters' leases at once: for each of Leases,
	// Key the lock, Value the waiter, TTL the lease (OpQueueBeat's). Each:
	// per lease, whether the waiter is still queued there.
	OpQueueBeats

	// OpSemaphore is one step on a semaphore's permits (SemaphoreKey: Key
	// the semaphore, Value a permit's id), Mode says which (semaphore.go):
	// "take" (TTL, Round; N the slot to try first; OK: held, N its slot,
	// else N the ms until the first permit held there lapses, -1 none),
	// "undo" (Round: only the permit that round gave; OK: freed), "drop"
	// (OK: it was held; N the permits not held now), "lease" (TTL; OK: it
	// was held, N its slot; N: the update's version, landing only past
	// the node's last, else N -1), "ver" (OK: held; N: the version of
	// id's last lease update), "init"
	// (N, where none is; OK: done, N the permits now), "repair" (N: init unless a DEL is
	// recent), "state" (N: the permits; Pre: 1 when they were set;
	// Notes: each held id, its slot and its ms left, in turn). Pre, but for
	// "state": the node's permits; Entry.Round: the node's generation
	// of the number (the Round of the "init" that set it, which "init" and
	// "repair" carry; a DEL's tombstone lists those it read, and no
	// "repair" of them lands while it lasts).
	OpSemaphore

	// OpReattach (a holder's LOCK.ACQUIRE ... SESSION) is OpPExpireIfEq
	// that also notes Round as the lock's writer (keeping its token): the
	// lock moves to the connection that re-attached it, and the renewals
	// and the release at close of the connection that booked it before,
	// which name their own round, no longer reach it. Refused where the
	// lock is connection-bound (its round ends with BoundMark): a SET NX
	// lock is not made a session lock. OK: done.
	OpReattach

	// OpHashLease sets hash lock Key's TTL to TTL whoever holds it
	// (RedissonMultiLock's owner-less lease), as N says: LeaseMax never
	// shorter, LeaseSet exactly, LeaseMin only shorter. OK: set (with
	// LeaseMax: the lock is there).
	OpHashLease

	// OpUnmark is a release's second step: it removes Key's note where it
	// is still the mark "!Value" that an OpDelIfEq with Mark Value left
	// (the lock-delay of a lock whose release had not succeeded yet).
	// OK: removed.
	OpUnmark

	// OpPrint is a force release's first step: Entry.Value is a digest of
	// what a DEL of Key (Mode as OpDel's) would delete there now, each key's
	// type, content and expiry time ("": nothing); Entry.Found: the lock or
	// semaphore itself exists; Entry.Round: the semaphore's generation
	// (OpSemaphore), which OpDel's Aux lists (space separated) for its
	// tombstone. Writes nothing but what reading a
	// read-write lock settles (its lapsed holders). A new grant of the key
	// prints differently (its round, content or expiry), so a late copy of
	// an OpDel never deletes a grant made after its read.
	OpPrint

	// OpDelLatch deletes Key where it is an unlock latch, the result a
	// release left for its retries (Redisson's "redisson_unlock_latch:..."):
	// "-2" to "1" with a TTL, and no lock's note, fencing counter or
	// semaphore by that name. OK: deleted; N 0: absent; N -1: something
	// else is there (left: deleting it is a force release).
	OpDelLatch
)

// Op is one single-node operation.
type Op struct {
	Kind OpKind
	// An OpSetNX or OpHashAcquire that is not Fair is refused (as if the
	// lock were held) while Key has a wait queue (a re-entry of a hash
	// lock excepted): only a waiter may take a lock others wait for.
	// Fair: an OpSetNX sets only while Key's wait queue is empty or has
	// its Value (a waiter waits under its owner's name) at the head,
	// expired waiters purged first, and refuses with N, the ms until trying
	// again may succeed; an OpDelIfEq also takes Value out of the queue and
	// reports waiters left (N 2). A Fair OpHashAcquire (Redisson's
	// RFairLock) waits its turn in the queue Aux names (QueueKey(Aux)) by
	// the same rules, leaves it when granted, and where refused renews
	// Value's place for N ms beyond the wait it reports.
	Fair bool
	// Tentative: an OpRaise's token noted beside the lock is tentative
	// (the acquire's first raise, which may yet be outbid).
	Tentative bool
	Key       string
	Value     string
	TTL       time.Duration
	// Aux is a second key some hash ops touch: an unlock latch kept for
	// AuxTTL, or a fencing token counter. An OpSetNX's AuxTTL is its
	// lock-delay: the note beside the lock outlives it by that much, and
	// while a note outlives its lock the key cannot be set; an OpSetXX's
	// (Settings.LockDelay) is the new holder's, where it writes another
	// value; an OpHashAcquire's, the hash lock's.
	Aux    string
	AuxTTL time.Duration
	// IfEq, when not empty, makes an OpSetXX overwrite Key only where it
	// holds IfEq: a compare-and-set (OverwriteIfEq).
	IfEq string
	// Mark is an OpDelIfEq's release id: where the lock's note outlives
	// it, the note is kept, marked with it, until the release succeeded.
	// An OpSetXX's without IfEq, or an OpHashLease's that may shorten, is
	// the prints a first round read (OpPrint, space separated): it lands
	// only where the lock still prints as one of them.
	Mark string
	// Mode makes a hash lock op one of a read-write lock's (Redisson's
	// RReadWriteLock): "read" or "write". A node tells a read-write lock by
	// its hash's mode field, so only an op that may create one (a grant, a
	// repair of a free node) or must not touch a plain one (a release) says
	// which; see HoldersKey.
	Mode string
	N    int64
	// Round identifies the round that writes (acquire, overwrite): kept
	// beside the key, so that a rollback (OpUndo) removes only its own
	// round's write, never a retry's through another replica.
	Round string
	// Pad is TTL minus the TTL the holder asked for, kept beside the key:
	// an extend refuses once the key's PTTL is down to it, as the holder's
	// window is then over even though the padded key lives on.
	Pad time.Duration
	// Leases are the locks an OpRenew extends (behind a pointer: every
	// other op is copied through the rounds without them).
	Leases *[]Lease
}

// Reply is one node's answer to an Op.
type Reply struct {
	OK    bool
	Entry Entry     // OpRead, OpHashGet
	N     int64     // OpHashAcquire: holds (or the holder's PTTL); OpHashRelease: its result; OpRaise: the counter before; fair OpSetNX refused: ms to wait; OpQueueTail: the ticket
	Pre   int64     // OpHashRelease: the holds before, -1 when answered from the latch
	Holds int64     // OpHashRelease answered "still held" from its latch where the owner holds the lock: its holds there now
	Token int64     // OpHashAcquire with a token counter: the counter after INCR; OpFixToken: the token fixed beside the lock
	Own   bool      // OpRaise: the counter was last written by this op's Round; a Fair OpHashAcquire refused: its owner is queued there; OpHashRelease answered "still held" from its latch: the owner holds the lock there
	Noted bool      // OpRaise with a lock: the lock holds Value and now notes the token; OpDelIfEq with Mark: the note was kept, marked
	Each  *[]bool   // OpRenew: per lease, whether it was extended
	Notes *[]string // OpRenew: per lease extended, the token part of its note there ("", "<token>", "=<token>"; "0": none yet)
	// Others: OpHashRelease gave up the owner's last hold where other
	// holders of a read-write lock keep it.
	Others bool
	Err    error
}

// Entry is one node's view of a key.
type Entry struct {
	Found bool
	Value string
	// TTL is the remaining time to live; negative when the key has no expiry.
	TTL time.Duration
	// Type is the kind of key: a string, or a hash (a reentrant lock; Value
	// is then its owner), or anything else.
	Type KeyType
	// Note is how a string lock's token is kept beside it (reads with its
	// note): none yet, by a fenced acquire, or fixed by a first TokenOf.
	Note NoteKind
	// Token is the fencing token noted beside a fenced lock (0: none).
	Token int64
	// Tentative: a node's fenced lock notes Token tentative (its acquire's
	// first raise, which may yet be outbid; no last raise made it final
	// there yet): it counts only beside the same token final on another
	// holder of the round (then the first raise's token was the last's).
	// In a quorum's answer (Token 0): a holder notes one, and no token is
	// final on Q holders yet.
	Tentative bool
	// Round is the round that wrote a string lock (reads with its note).
	Round string
	// Agreed counts the holders of the lock's round whose note carries
	// this Note and Token exactly (reads with notes): a token Q holders
	// note is settled, one raise in flight cannot change it (Reattach).
	Agreed int
}

// KeyType is the Redis type of a key as reads report it.
type KeyType uint8

// NoteKind is how the token beside a string lock was given.
type NoteKind uint8

// The tokens a string lock's note may carry. A fenced acquire notes its
// lock as fenced at once (token 0 until its raise notes the token); a lock
// taken without a token has none until a TokenOf fixes one.
const (
	NoteNone   NoteKind = iota // no token, and none given by the acquire
	NoteFenced                 // a fenced acquire's: the largest noted is the lock's
	NoteFixed                  // fixed by a TokenOf, set if absent per node: the one Q holders agree on is the lock's
)

// The key types reads tell apart.
const (
	TypeString KeyType = iota
	TypeHash
	TypeOther
)

// ErrClosed answers the operations of a node that was closed: nothing was sent.
var ErrClosed = errors.New("node closed")

// ReplyError is an error the backend's server answered with (a Lua error,
// an ACL refusal): the node is reachable, so the engine does not recheck
// its health for it, but the operation did not happen. A Node reports
// server replies as *ReplyError and everything else (timeouts, a broken
// connection) as it met it.
type ReplyError struct{ Msg string }

func (e *ReplyError) Error() string { return e.Msg }
