package e2e

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	hist "github.com/redlock-proxy/redlock-proxy/internal/history"
)

// history records every lock a client believed it held, on the test
// process's monotonic clock.
type history struct {
	mu       sync.Mutex
	holds    map[string][]hold
	attempts int
	ok       int
	taken    int
	noQuorum int
	late     int // OK replies that arrived after the window they granted had ended
	other    []error
	latency  []time.Duration // of acquires that got an answer
	rec      *hist.Recorder  // every op, for hist.Check
}

// hold is one owner's window: from the OK reply to the earlier of its release
// send and the end of the TTL it asked for, counted from its send.
type hold struct {
	owner      string
	start, end time.Time
	shared     bool // a read-write lock's reader: readers may overlap each other
}

func newHistory() *history { return &history{holds: map[string][]hold{}, rec: hist.NewRecorder()} }

// record adds one op to the history Check reads: an acquire sent at sent
// and answered at replied (a token if its reply carried one), and, if
// released is set, the release sent then, whose answer is not recorded
// (Unknown: it may have ended the hold at its send).
func (h *history) record(key, owner string, sent, replied time.Time, ttl time.Duration, ok bool, err error, released time.Time, token int64, shared bool) {
	op := hist.Op{Client: owner, Key: key, Kind: hist.Acquire, Owner: owner, TTL: ttl,
		Invoke: h.rec.Since(sent), Return: h.rec.Since(replied), Outcome: hist.Taken, Token: token, Shared: shared}
	switch {
	case err != nil:
		op.Outcome, op.Error, op.Token = hist.Unknown, err.Error(), 0
	case ok:
		op.Outcome = hist.OK
	}
	h.rec.Add(op)
	if !released.IsZero() {
		at := h.rec.Since(released)
		h.rec.Add(hist.Op{Client: owner, Key: key, Kind: hist.Release, Owner: owner, Invoke: at, Return: at, Outcome: hist.Unknown})
	}
}

// token records a LOCK.TOKEN read: its token, nil (not held), or an error.
func (h *history) token(key, owner string, sent, replied time.Time, token int64, err error) {
	op := hist.Op{Client: owner, Key: key, Kind: hist.Token, Owner: owner,
		Invoke: h.rec.Since(sent), Return: h.rec.Since(replied), Outcome: hist.OK, Token: token}
	switch {
	case errors.Is(err, redis.Nil):
		op.Outcome, op.Token = hist.NotHeld, 0
	case err != nil:
		op.Outcome, op.Error, op.Token = hist.Unknown, err.Error(), 0
	}
	h.rec.Add(op)
}

// grantDelayed records an OK grant with its token and the lock-delay it
// owes if it expires unreleased (the replica's native_lock_delay).
func (h *history) grantDelayed(key, owner string, sent, replied time.Time, ttl, delay time.Duration, token int64) {
	h.attempt1(key, owner, sent, replied, ttl, true, nil, time.Time{}, false)
	h.rec.Add(hist.Op{Client: owner, Key: key, Kind: hist.Acquire, Owner: owner, TTL: ttl, Delay: delay,
		Invoke: h.rec.Since(sent), Return: h.rec.Since(replied), Outcome: hist.OK, Token: token})
}

// attemptToken is attempt for a grant whose reply carried its fencing token.
func (h *history) attemptToken(key, owner string, sent, replied time.Time, ttl time.Duration, ok bool, err error, released time.Time, token int64) {
	h.attempt1(key, owner, sent, replied, ttl, ok, err, released, false)
	h.record(key, owner, sent, replied, ttl, ok, err, released, token, false)
}

// fail records that a scenario did not run as it must (its hazard was not
// set up, or a client got an answer one Redis would not give): the row fails.
func (h *history) fail(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.other = append(h.other, fmt.Errorf(format, args...))
}

func (h *history) attempt(key, owner string, sent, replied time.Time, ttl time.Duration, ok bool, err error, released time.Time) {
	h.attempt1(key, owner, sent, replied, ttl, ok, err, released, false)
	h.record(key, owner, sent, replied, ttl, ok, err, released, 0, false)
}

// attemptRW is attempt for a read-write lock: a read (shared) may overlap
// other reads, a write nothing.
func (h *history) attemptRW(key, owner string, shared bool, sent, replied time.Time, ttl time.Duration, ok bool, err error, released time.Time) {
	h.attempt1(key, owner, sent, replied, ttl, ok, err, released, shared)
	h.record(key, owner, sent, replied, ttl, ok, err, released, 0, shared)
}

func (h *history) attempt1(key, owner string, sent, replied time.Time, ttl time.Duration, ok bool, err error, released time.Time, shared bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts++
	switch {
	case err != nil && len(err.Error()) >= 8 && err.Error()[:8] == "NOQUORUM":
		h.noQuorum++
	case err != nil:
		h.other = append(h.other, fmt.Errorf("%s by %s: %w", key, owner, err))
	case ok:
		h.ok++
		end := sent.Add(ttl)
		if !released.IsZero() && released.Before(end) {
			end = released
		}
		if replied.Before(end) {
			h.holds[key] = append(h.holds[key], hold{owner, replied, end, shared})
		} else if replied.After(sent.Add(ttl)) {
			h.late++ // an OK for a window already over: the proxy must never send one
		}
	default:
		h.taken++
	}
	h.latency = append(h.latency, replied.Sub(sent))
}

// overlaps lists every pair of owners whose windows on one key intersect
// (but two readers of a read-write lock). Sorted by start, each window is
// compared with the one ending last before it, and with the exclusive one
// ending last.
func (h *history) overlaps() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for key, hs := range h.holds {
		hs = slices.Clone(hs)
		slices.SortFunc(hs, func(a, b hold) int { return a.start.Compare(b.start) })
		var last, lastExcl *hold
		for i := range hs {
			x := &hs[i]
			against := lastExcl
			if !x.shared {
				against = last
			}
			if against != nil && x.start.Before(against.end) {
				out = append(out, fmt.Sprintf("%s: %s from %s overlaps %s until %s (%v)", key, x.owner,
					x.start.Format("15:04:05.000"), against.owner, against.end.Format("15:04:05.000"), against.end.Sub(x.start)))
			}
			if last == nil || x.end.After(last.end) {
				last = x
			}
			if !x.shared && (lastExcl == nil || x.end.After(lastExcl.end)) {
				lastExcl = x
			}
		}
	}
	return out
}

func (h *history) p99() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.latency) == 0 {
		return 0
	}
	l := slices.Clone(h.latency)
	slices.Sort(l)
	return l[len(l)*99/100]
}
