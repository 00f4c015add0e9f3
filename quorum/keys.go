package quorum

import (
	"errors"
	"strings"
)

// Internal keys the engine keeps on every backend beside the locks. Clients
// never see them: reads and scans through the engine skip them.
const (
	// InternalPrefix starts every key the engine keeps for itself.
	InternalPrefix = "__redlock:"
	// metaPrefix + a lock key is a hash beside each lock: field r, the round
	// that wrote the lock; field p, the padding of its TTL in ms.
	metaPrefix = InternalPrefix + "m:"
	// IntactKey (no TTL) holds the run_id of the backend when an engine
	// marked it intact; see NodeInfo.Intact.
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

// WriterKey names the round that last wrote fencing counter key (its
// INCR, or a raise): a raise tells its own writes from another grant's.
func WriterKey(counter string) string { return InternalPrefix + "w:" + counter }

// QueueKey is the fair queue of waiters for lock key (a sorted set: waiter
// -> ticket), and QueueLeaseKey their leases (waiter -> when it ends, in
// the backend's ms): a waiter whose replica stops renewing it leaves.
func QueueKey(key string) string      { return InternalPrefix + "q:" + key }
func QueueLeaseKey(key string) string { return InternalPrefix + "ql:" + key }

// MetaKey is the key that notes who wrote lock key, and how padded.
func MetaKey(key string) string { return metaPrefix + key }

// IsInternal reports whether key is one the engine keeps for itself.
func IsInternal(key string) bool { return strings.HasPrefix(key, InternalPrefix) }

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
