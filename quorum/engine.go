package quorum

import (
	"context"
	"encoding/hex"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Engine runs Redlock rounds across N independent nodes. It holds no lock
// state of its own; it is safe for concurrent use.
type Engine struct {
	nodes  []Node
	quorum int
	opts   options
	keys   keyLocks
	// reattaching serialises re-attaches of one lock with their callers'
	// bookings (Reattach).
	reattaching keyLocks

	allIdx        []int // 0..N-1
	health        []*health
	life          context.Context    // ends at Close
	stop          context.CancelFunc // ends life: the health monitors, the confirmations
	monitors      background         // the goroutines life ends
	hadQuorum     atomic.Bool
	everHadQuorum atomic.Bool
	checkedAll    atomic.Bool // every backend's first health check is done

	rollbacks, rollbackFailures atomic.Int64
	fenced, fencedRaised        atomic.Int64 // fenced grants given, and those of them that raised (not oneRound)
	unmarking                   atomic.Int64 // releases whose marks are being removed in the background (unmarkLate)
	leaving                     atomic.Int64 // granted fair waiters' places being removed in the background (leftQueue)

	roundPrefix string // random per engine: round ids are unique across replicas
	roundSeq    atomic.Uint64

	presenceSeq atomic.Int64 // numbers this engine's presence writes (EngineKey), increasing

	window    atomic.Int64 // quarantine window in ns: the longest padded TTL (and lock-delay) any engine grants
	repairing sync.Mutex   // one counter repair or bootstrap at a time
}

// Rollbacks reports how many failed acquires were rolled back, and how many
// rollback deletes failed.
func (e *Engine) Rollbacks() (rounds, failures int64) {
	return e.rollbacks.Load(), e.rollbackFailures.Load()
}

// FencedGrants reports how many fenced grants were given, and how many of
// them needed a raise round (their holders' counters disagreed: see
// oneRound).
func (e *Engine) FencedGrants() (grants, raised int64) {
	return e.fenced.Load(), e.fencedRaised.Load()
}

// Quorum is Q = N/2 + 1.
func (e *Engine) Quorum() int { return e.quorum }

// Nodes returns the number of nodes, N.
func (e *Engine) Nodes() int { return len(e.nodes) }

// MinValidity is the least validity a grant must leave its caller.
func (e *Engine) MinValidity() time.Duration { return e.opts.MinValidity }

// MinTTL is the shortest TTL a lock can be granted with: it must outlast
// the minimum validity and leave each backend at least a millisecond to
// answer (ttl * timeout factor).
func (e *Engine) MinTTL() time.Duration {
	perNode := time.Duration(math.Ceil(float64(time.Millisecond) / e.opts.TimeoutFactor))
	return max(e.opts.MinValidity+time.Millisecond, perNode).Round(time.Millisecond)
}

// TimeoutFactor is the fraction of a lock's TTL a round waits for a backend.
func (e *Engine) TimeoutFactor() float64 { return e.opts.TimeoutFactor }

// MaxTTL is the longest TTL a lock may ask for.
func (e *Engine) MaxTTL() time.Duration { return e.opts.MaxTTL }

// PaddedTTL is the TTL written to the backends for a lock of ttl:
// ceil(ttl / (1 - drift_factor)) + 2ms, in whole milliseconds. A key written
// with it at any moment after the client asked outlives the client's window
// even on a backend whose clock runs fast by the drift factor.
func (e *Engine) PaddedTTL(ttl time.Duration) time.Duration {
	ms := math.Ceil(float64(ttl.Milliseconds()) / (1 - e.opts.DriftFactor))
	return time.Duration(ms+2) * time.Millisecond
}

// Drift is the drift allowance for ttl: ttl * drift_factor + 2ms.
func (e *Engine) Drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*e.opts.DriftFactor) + 2*time.Millisecond
}

// lockTimeout is the per-node wait of a round for a lock of ttl:
// min(node_timeout, ttl * timeout_factor).
func (e *Engine) lockTimeout(ttl time.Duration) time.Duration {
	return min(e.opts.NodeTimeout, time.Duration(float64(ttl)*e.opts.TimeoutFactor))
}

// checkTTL is the one check of a lock's TTL against the engine's limits.
func (e *Engine) checkTTL(ttl time.Duration) error {
	var reason error
	shortest := e.MinTTL()
	switch {
	case ttl <= 0:
		reason = ErrInvalidTTL
	case ttl > e.opts.MaxTTL:
		reason = ErrTTLTooLong
	case ttl < shortest:
		reason = ErrTTLTooShort
	default:
		return nil
	}
	return &TTLError{TTL: ttl, Min: shortest, Max: e.opts.MaxTTL, MinValidity: e.opts.MinValidity,
		TimeoutFactor: e.opts.TimeoutFactor, Reason: reason}
}

type arrivalKey struct{}

// WithArrival returns ctx carrying the moment the caller's request arrived
// (read off the client's socket). Acquire and extend rounds measure the
// validity they leave from it, so time spent queued before the round
// started counts against the caller's window. Without it they measure from
// their own call.
func WithArrival(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, arrivalKey{}, t)
}

func arrival(ctx context.Context) time.Time {
	if t, ok := ctx.Value(arrivalKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}

// newRoundID returns an id no other round of any engine shares: this
// engine's random prefix and a sequence number.
func (e *Engine) newRoundID() string {
	var buf [64]byte // one allocation, the string: the prefix is 16 hex digits
	b := append(append(buf[:0], e.roundPrefix...), '.')
	return string(strconv.AppendUint(b, e.roundSeq.Add(1), 36))
}

func newRoundPrefix(random []byte) string { return hex.EncodeToString(random) }

// Grant describes a lock a round obtained or extended.
type Grant struct {
	// Validity is how much of the requested TTL was left when the quorum
	// decided: the caller's window minus the round's duration.
	Validity time.Duration
	// Votes is how many nodes agreed by the time of the decision.
	Votes int
	// Token is the fencing token of a fenced grant (AcquireHash with a token
	// counter): larger than that of every grant before it.
	Token int64
	// ReplyBy is when the caller's window, less the minimum validity, ends
	// (on the monotonic clock, from the request's arrival): a reply that
	// says "granted" must be written before it, or the grant revoked.
	ReplyBy time.Time
	// Round is the round id an acquire or a re-attach noted beside the
	// lock on the nodes ("" for an extend): a session lock's renewals and
	// its release at close name it (Lease.Round, ReleaseRound).
	Round string
	// From is the round a re-attach read and moved the lock from (Reattach;
	// "" otherwise): the bookings that name it are of the lock it moved,
	// those that name another round may be of its next life.
	From string

	revoke *revocation
}

// Revoke undoes a grant whose reply could not be written by ReplyBy: an
// acquire is rolled back on every node its round may have written to, once
// its stragglers have answered, removing only that round's writes. It
// returns when the rollback is done. An extend has nothing to undo: a lock
// extended on some nodes only delays other owners until its TTL.
func (g Grant) Revoke() {
	if g.revoke != nil {
		g.revoke.run()
	}
}
