package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Connection-bound locks: SET key value NX without PX/EX (redis-py's
// r.lock(name) with no timeout, and many hand-written locks). On one Redis
// such a key never expires, so a client that dies holding it holds it
// forever. Here it is what its user means, held until released, without
// that hazard: a SESSION lock (sessions.go) whose lease is bound_lease. The
// session renewer renews it while the connection that took it is open; it
// is released when that connection closes, and expires with its lease if
// this process dies or cannot renew it (then it is lost, as a SESSION lock
// is, and never renewed again).
//
// PTTL and TTL answer -1 for it, as Redis does for a key without expiry,
// on every replica and every connection: the acquire round's id carries
// quorum.BoundMark, noted beside the lock on the backends (Entry.Bound).
//
// An operator who sets default_ttl keeps the behaviour from before: such a
// SET gets that TTL, expires after it whatever its holder does, and PTTL
// shows it.

// acquireBound takes a connection-bound lock for SET key value NX.
func (s *lockService) acquireBound(c *request, req setArgs) {
	lease := s.boundLease()
	if tick := s.opts.SessionTick; lease < 3*tick {
		// bound_lease 0 with a short max_ttl: the renewer could not reach the
		// lock twice within its lease, and would lose it under its holder.
		c.writeErr(respError(fmt.Sprintf("ERR SET without a TTL takes a connection-bound lock, whose lease (bound_lease 0: 10s or max_ttl, here %v) "+
			"must be at least three session ticks (session_tick %v): give the lock a TTL, or set bound_lease or default_ttl", lease, tick)))
		return
	}
	unreserve, err := s.sessions.reserveSession(c.peer, c.userName(), sessionKey{req.Key, req.Value}) // a session lock: it counts in the limits
	if err != nil {
		c.writeErr(err)
		return
	}
	defer unreserve()
	start := time.Now()
	g, err := s.engine.AcquireBound(c.ctx, req.Key, req.Value, lease)
	c.track(kindAcquire, start, g, err)
	switch {
	case err == nil:
		c.bookSession(sessionKey{req.Key, req.Value}, lease, g)
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrTaken):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// defaultBoundLease is bound_lease when none is set (and max_ttl allows).
const defaultBoundLease = 10 * time.Second

// boundLease is the lease of a connection-bound lock: bound_lease, or 10s
// capped at max_ttl.
func (s *lockService) boundLease() time.Duration {
	if s.opts.BoundLease > 0 {
		return s.opts.BoundLease
	}
	return min(defaultBoundLease, s.engine.MaxTTL())
}

// releaseLock releases key held by owner by quorum, after taking it out of
// the session book (unbook): every release of a string lock but the
// native ones' (releaseFair) and the close of a session (releaseRound) goes
// through here, so no renewal puts a released lock back.
func (s *lockService) releaseLock(ctx context.Context, key, owner string) error {
	s.unbook(key, owner)
	return s.engine.Release(ctx, key, owner)
}

// extendLock extends key held by owner for c. Either way the lock stays
// in the session (or connection-bound booking) it is in, renewed while
// that connection lives, and no renewal shortens the window the extend
// promised. From the connection that booked it (ExtendRound), its close
// releases it. From anywhere else (Extend), the extend pins its promise:
// the booking connection's close leaves the lock to its TTL while the
// window this extend answered for is open. An extend that fails or lapses
// changes nothing the holder counts on. A lock moved elsewhere since this
// connection booked it is extended the second way.
func (s *lockService) extendLock(c *request, key, owner string, ttl time.Duration) (quorum.Grant, error) {
	id := sessionKey{key, owner}
	if round, ok := s.sessions.roundOf(c.peer, id); ok {
		g, err := s.engine.ExtendRound(c.ctx, key, owner, ttl, round)
		if !errors.Is(err, quorum.ErrNotHeld) {
			return g, err
		}
	}
	return s.engine.Extend(c.ctx, key, owner, ttl)
}

// unbook takes key's lock held by owner (by any owner when owner is "")
// out of the session book of every connection, before a release: a
// release may come on another connection than the acquire (a client's
// connection pool), and a renewal after the release would set the lock
// again where it is gone. A force release (DEL) unbooks every owner's.
func (s *lockService) unbook(key, owner string) { s.unbookRound(key, owner, nil, "") }

// unbookRound is unbook of owner's bookings of key that name round (any,
// when round is ""), except connection keep's: a re-attach through keep
// moved the lock from round. Only the bookings of the round it moved from
// go: one that names another round may be of the lock's next life (the
// owner released it and took it again, on this replica, while the
// re-attach ran: helper-73), and one of an older round of the same lock
// reaches it no more (its renewals find their round on no quorum, and
// drop it; its release at close names a round the nodes do not hold).
func (s *lockService) unbookRound(key, owner string, keep peer, round string) {
	type booked struct {
		p     peer
		id    sessionKey
		round string
	}
	ss := &s.sessions
	ss.mu.Lock()
	var found []booked
	for p, mine := range ss.book {
		if owner != "" { // one lookup per connection
			if id := (sessionKey{key, owner}); mine[id] != nil && p != keep && (round == "" || mine[id].round == round) {
				found = append(found, booked{p, id, round})
			}
			continue
		}
		for id := range mine {
			if id.key == key {
				found = append(found, booked{p, id, ""})
			}
		}
	}
	ss.mu.Unlock()
	for _, b := range found {
		ss.dropRound(b.p, b.id, b.round) // rebooked since with another round: stays
	}
}
