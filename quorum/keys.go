package quorum

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Internal keys the engine keeps on every backend beside the locks. Clients
// never see them: reads and scans through the engine skip them.
const (
	// InternalPrefix starts every key the engine keeps for itself.
	InternalPrefix = "__redlock:"
	// metaPrefix + a lock key is the note beside each lock, a string
	// "<round> <pad>[ <token>]": the round that wrote the lock, the padding
	// of its TTL in ms, a fenced lock's token; it outlives the lock by the
	// lock-delay.
	metaPrefix = InternalPrefix + "m:"
	// IntactKey (no TTL) holds the run_id of the backend when an engine
	// marked it intact, and the marking's id (NewMarker); see
	// NodeInfo.Intact.
	IntactKey = InternalPrefix + "intact"
	// CountersKey is the set of fencing counter keys on a backend.
	CountersKey = InternalPrefix + "counters"
	// TokenKey (no TTL) is the fencing counter of the native locks
	// (AcquireFenced): one per backend, for every key, so that it costs
	// constant memory; tokens only need to grow per key, and one counter
	// grows for all of them.
	TokenKey = InternalPrefix + "token"
	// MaxTTLKey (no TTL) records the longest padded TTL plus lock-delay,
	// in ms, that any engine sharing the backend may grant: every engine's
	// restart quarantine lasts at least that long.
	MaxTTLKey = InternalPrefix + "max_ttl"
)

// EngineKey is engine id's presence on a backend (EngineKeyTTL): each
// health check writes it and says whether it was there. One this engine
// wrote that is gone says the backend lost keys since (a flush, or a
// restart without them), whatever other engines wrote or read there.
func EngineKey(id string) string { return InternalPrefix + "engine:" + id }

// EngineKeyTTL is how long an engine's presence outlives its last check of
// a backend: a backend this engine could not check for that long is taken
// as flushed when it is read again (quarantined one window, never unsafe).
const EngineKeyTTL = 24 * time.Hour

// RepairKey is the note a repair in chunks (Node.Repair) that will write
// marker keeps while its chunks run: a chunk after the first finds it, or
// the backend was flushed since and lost the chunks before. One per
// repair, so that replicas repairing one backend at once do not cancel
// each other's.
func RepairKey(marker string) string { return InternalPrefix + "repairing:" + marker }

// WriterKey names the round that last wrote fencing counter key (its
// INCR, or a raise): a raise tells its own writes from another grant's.
func WriterKey(counter string) string { return InternalPrefix + "w:" + counter }

// QueueKey is the fair queue of waiters for lock key (a sorted set: waiter
// -> ticket), and QueueLeaseKey their leases (waiter -> when it ends, in
// the backend's ms): a waiter whose replica stops renewing it leaves.
func QueueKey(key string) string      { return InternalPrefix + "q:" + key }
func QueueLeaseKey(key string) string { return InternalPrefix + "ql:" + key }

// SemaphoreKey holds semaphore name's permits as slots (Redisson's
// RPermitExpirableSemaphore: a hash of the number of permits, each slot's
// id and each id's slot), and SemaphoreLeaseKey when each held id's permit
// lapses (id -> the backend's Unix ms): see AcquirePermit.
func SemaphoreKey(name string) string      { return InternalPrefix + "sem:" + name }
func SemaphoreLeaseKey(name string) string { return InternalPrefix + "seml:" + name }

// SemaphoreGoneKey is semaphore name's tombstone, while a DEL of it is
// recent (SemaphoreGoneTTL): the generations of its number the DEL read. A
// repair of one of them, sent by a read that saw it before the DEL, lands
// as nothing; a number set again since (a new generation) is repaired.
func SemaphoreGoneKey(name string) string { return InternalPrefix + "semx:" + name }

// SemaphoreGoneTTL outlives any repair still in flight when a DEL lands.
const SemaphoreGoneTTL = time.Minute

// GrantStampKey holds the round of the grant that created hash lock key
// (Redisson's layout) on a node, for the lock's first lease: a lock taken
// again, even by the same owner and expiring on the same millisecond,
// prints differently (OpPrint), so a late copy of a force release never
// reaches it.
func GrantStampKey(key string) string { return InternalPrefix + "gs:" + key }

// LockCounterKey is the fencing counter of a hash lock whose client names
// its own (Redisson's RFencedLock: redisson_lock_token:{name}, or any key it
// passes): kept in the engine's names, so no client command reaches it by
// the name the client gave (a compare-and-delete, a DEL, an extend, a latch
// written there), and the key of that name, whatever it holds, is never
// touched. A node without it starts it from its shared counter TokenKey
// (hashacquire.lua): a counter made again after a loss (markSeeded, a total
// wipe) starts above every token it gave, as TokenKey does (fencingdoc.go).
func LockCounterKey(name string) string { return InternalPrefix + "c:" + name }

// HoldersKey is the set of holders of read-write lock key (Redisson's
// RReadWriteLock), each with the end of its window (holder -> the
// backend's Unix ms): readers share the lock and each one's hold expires
// at its own time, as one key's would; the lock's hash lives as long as
// its last holder.
func HoldersKey(key string) string { return InternalPrefix + "h:" + key }

// MetaKey is the key that notes who wrote lock key, and how padded.
func MetaKey(key string) string { return metaPrefix + key }

// PinKey is the promise an extend from outside a lock's session made
// (Extend, or Overwrite with the holder's value): it holds the lock's value for the TTL that extend answered 1
// for, and while it does, neither the release at the close of the
// connection that booked the lock (ReleaseRound) nor the rollback of its
// acquire deletes the lock: it lives out that window.
func PinKey(key string) string { return InternalPrefix + "x:" + key }

// DBPrefix starts the keys of the lock namespaces a proxy serves beside
// database 0 (SELECT n): NamespaceKey(n, key) is "__redlock:db<n>:" + key.
// They are clients' keys, not the engine's: locks, notes, counters and
// queues work on them as on any key. The engine's own names never start
// with it (m:, w:, q:, ql:, x:, h:, intact, counters, token, max_ttl), and a
// proxy refuses every client name under InternalPrefix, so the mapping is
// injective: no client key of database 0 is a key of another database.
const DBPrefix = InternalPrefix + "db"

// NamespaceKey is key of database db on the backends: key itself in
// database 0, "__redlock:db<n>:" + key in database n > 0.
func NamespaceKey(db int, key string) string {
	if db == 0 {
		return key
	}
	return DBPrefix + strconv.Itoa(db) + ":" + key
}

// SplitNamespace undoes NamespaceKey: the database and the client's key.
func SplitNamespace(key string) (db int, name string) {
	rest, ok := strings.CutPrefix(key, DBPrefix)
	if !ok {
		return 0, key
	}
	i := strings.IndexByte(rest, ':')
	if i < 1 || i > 2 || rest[0] == '0' || rest[0] < '0' || rest[0] > '9' || rest[i-1] < '0' || rest[i-1] > '9' {
		return 0, key // only NamespaceKey's own spelling: 1-99, no sign, no leading zero
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil || n < 1 || n >= 100 {
		return 0, key
	}
	return n, rest[i+1:]
}

// IsInternal reports whether key is one the engine keeps for itself (not
// a key of a database other than 0: NamespaceKey).
func IsInternal(key string) bool {
	if !strings.HasPrefix(key, InternalPrefix) {
		return false
	}
	db, _ := SplitNamespace(key)
	return db == 0
}

// ErrReserved: a caller named a key under InternalPrefix. Only the engine
// chooses those keys (the markers, records and counters its health checks
// and fencing believe); no operation takes one on a caller's word, so
// nothing a client sends can write, read or delete them, not even on one
// node for the moment before a rollback.
var ErrReserved = errors.New("quorum: keys starting " + InternalPrefix + " are the engine's own")

// reservedKey refuses the names a caller passed when one is internal ("":
// none given).
func reservedKey(keys ...string) error {
	for _, k := range keys {
		if IsInternal(k) {
			return ErrReserved
		}
	}
	return nil
}

// NewMarker is a deployment marker for a backend's run runID: the run_id,
// a space and a random id of this marking, so that a marker lost under the
// same run (a flush) and written again reads differently (health.observe).
func NewMarker(runID string) string { return fmt.Sprintf("%s %016x", runID, rand.Uint64()) }

// MarkerRun is the run_id a deployment marker names (markers written before
// NewMarker are the run_id alone).
func MarkerRun(marker string) string {
	run, _, _ := strings.Cut(marker, " ")
	return run
}
