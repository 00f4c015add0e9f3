package proxy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Connection-bound locks (LOCK.ACQUIRE ... SESSION), as ZooKeeper's
// ephemeral nodes and etcd's leases: the proxy renews them while the
// connection that took them is open and releases them when it closes. If
// this process dies, is paused or loses its backends, nothing renews them
// and they expire with their TTL, like any other lock.
//
// One renewer per server wakes every session_tick and renews, in one
// engine.Renew (one operation per backend), every session lock a third of
// whose TTL has passed since its window last opened, in fair order
// (renewal_order.go): each user's locks nearest deadline first, the users
// in turns, so one user's flood of locks queues behind its own. A lock whose renewal
// finds it gone from a quorum, or whose window ended before a renewal
// succeeded, is lost: it leaves the book and is never renewed again (its
// holder learns it from LOCK.EXTEND or LOCK.TOKEN answering 0 or nil).

// sessionKey names a session lock of one connection.
type sessionKey struct{ key, owner string }

// sessionLock is one lock a connection holds by session.
type sessionLock struct {
	c     peer
	id    sessionKey
	ttl   time.Duration
	until time.Time // its window ends: the last grant's arrival plus ttl
	user  string    // whose budget it counts in (sessionlimits.go)
	// round is the round its grant (or re-attach) noted beside the lock:
	// its renewals and its release at close reach the lock only while the
	// nodes still name it (the holder may have re-attached it elsewhere).
	round string
	token int64 // the fencing token its grant or re-attach answered (0: none)
}

// sessions is the server's book of session locks and their renewer.
type sessions struct {
	s       *lockService
	mu      sync.Mutex
	book    map[peer]map[sessionKey]*sessionLock
	stop    context.CancelFunc // nil until the renewer runs
	done    chan struct{}
	stopped bool // shut down: no renewer starts again

	// renewing is held while a renewal round runs: a renewal restores a
	// lock where a backend lost it, so a release waits for the round that
	// may carry the lock (see drop).
	renewing sync.RWMutex

	renewals, renewed, lost, released atomic.Int64
	left                              atomic.Int64 // left to their TTL by a graceful shutdown

	lossLog lossLog            // rate-limits the lost-lock warnings
	pending map[peer]int       // session acquires under way, per connection (sessionlimits.go)
	perUser map[string]int     // booked and pending session locks per user
	moving  map[sessionKey]int // re-attaches under way through this replica (proxy/reattach.go)
}

// minSessionTTL is the shortest TTL a session lock may have: the renewer
// must get to it at least twice within its window.
func (s *lockService) minSessionTTL() time.Duration { return 3 * s.opts.SessionTick }

// add books a session lock of c whose window ends at until, and starts the
// renewer if it is not running.
//
//lint:ignore U1000 the booking API other lock kinds share (addAs names the user)
func (ss *sessions) add(c peer, id sessionKey, ttl time.Duration, until time.Time, round string) {
	ss.addAs(c, "", id, ttl, until, round, 0)
}

// addAs is add for a lock counted in user's budget, granted token (0: none
// known), which its renewals confirm where its note holds it tentative.
func (ss *sessions) addAs(c peer, user string, id sessionKey, ttl time.Duration, until time.Time, round string, token int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.book == nil {
		ss.book = map[peer]map[sessionKey]*sessionLock{}
	}
	mine := ss.book[c]
	if mine == nil {
		mine = map[sessionKey]*sessionLock{}
		ss.book[c] = mine
	}
	if old := mine[id]; old != nil {
		ss.countUser(old.user, -1)
	}
	mine[id] = &sessionLock{c: c, id: id, ttl: ttl, until: until, user: user, round: round, token: token}
	ss.countUser(user, 1)
	if ss.stop == nil && !ss.stopped {
		ctx, cancel := context.WithCancel(context.Background())
		ss.stop, ss.done = cancel, make(chan struct{})
		go ss.renewer(ctx, ss.done)
	}
}

// extended moves a session lock's window after its holder extended it on
// its connection: renewals go on with the longer of the two TTLs, as the
// nodes keep it (extend.lua never shortens a session's lock), and the
// window ends no earlier than it did (helper-73: an extend shorter than a
// renewal tick set the window to end before the next tick, and the
// renewer dropped the lock as lost while its connection was open).
func (ss *sessions) extended(c peer, id sessionKey, ttl time.Duration, arrived time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if l := ss.book[c][id]; l != nil {
		l.ttl = max(l.ttl, ttl)
		if end := arrived.Add(ttl); end.After(l.until) {
			l.until = end
		}
	}
}

// drop takes a session lock out of the book (its holder released it, or its
// grant was revoked); it reports whether it was there.
// A dropped lock waits for a renewal round still out: the round could
// restore it where the release that follows has already deleted it.
func (ss *sessions) drop(c peer, id sessionKey) bool { return ss.dropRound(c, id, "") }

// awaitRenewal waits until no renewal round is out.
func (ss *sessions) awaitRenewal() {
	ss.renewing.RLock()
	//lint:ignore SA2001 an empty critical section: waiting for the round is the point
	ss.renewing.RUnlock()
}

func (ss *sessions) dropLocked(l *sessionLock) bool {
	if l == nil || ss.book[l.c][l.id] != l {
		return false
	}
	delete(ss.book[l.c], l.id)
	ss.countUser(l.user, -1)
	if len(ss.book[l.c]) == 0 {
		delete(ss.book, l.c)
		l.c.unheld()
	}
	return true
}

// closed releases every session lock of a connection that closed, and
// returns once each release round ended. During a graceful shutdown it
// leaves them to their TTL instead: their holders re-attach them on another
// replica (LOCK.ACQUIRE ... SESSION by the holder, reattach.go), so a
// rolling upgrade loses no lock.
func (ss *sessions) closed(c peer) {
	ss.mu.Lock()
	var mine []*sessionLock
	for _, l := range ss.book[c] {
		mine = append(mine, l)
	}
	for _, l := range mine {
		ss.dropLocked(l)
	}
	ss.mu.Unlock()
	if len(mine) == 0 {
		return
	}
	if ss.s.leaving.Load() {
		ss.left.Add(int64(len(mine)))
		return
	}
	ss.awaitRenewal() // see drop
	ctx, cancel := context.WithTimeout(context.Background(), ss.s.opts.WriteTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, l := range mine {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := ss.s.releaseRound(ctx, l.id.key, l.id.owner, l.round)
			ss.s.metrics.observe(kindRelease, start, err, 0)
			switch {
			case err == nil:
				ss.released.Add(1)
				return
			case errors.Is(err, quorum.ErrNotHeld):
				// Gone, or its holder re-attached it elsewhere (the nodes
				// name another round now), or an extend from another
				// connection pinned the window it promised: not this
				// connection's to release.
				ss.s.opts.logger.Debug("a session lock of a closed connection was no longer held by its round; nothing released",
					ss.s.sessionAttrs(l, err)...)
				return
			}
			ss.s.opts.logger.Warn("releasing a session lock of a closed connection failed; it expires with its TTL",
				ss.s.sessionAttrs(l, err)...)
		}()
	}
	wg.Wait()
}
