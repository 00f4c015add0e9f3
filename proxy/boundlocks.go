package proxy

import (
	"errors"
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
func (s *Server) acquireBound(c *request, req setArgs) {
	lease := s.boundLease()
	start := time.Now()
	g, err := s.engine.AcquireBound(c.ctx, req.Key, req.Value, lease)
	s.track(c, kindAcquire, start, g, err)
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
func (s *Server) boundLease() time.Duration {
	if s.opts.BoundLease > 0 {
		return s.opts.BoundLease
	}
	return min(defaultBoundLease, s.engine.MaxTTL())
}

// unbook takes key's lock held by owner (by any owner when owner is "")
// out of the session book of every connection, before a release: a
// release may come on another connection than the acquire (a client's
// connection pool), and a renewal after the release would set the lock
// again where it is gone. A force release (DEL) unbooks every owner's.
func (s *Server) unbook(key, owner string) {
	type booked struct {
		p  peer
		id sessionKey
	}
	ss := &s.sessions
	ss.mu.Lock()
	var found []booked
	for p, mine := range ss.book {
		if owner != "" { // one lookup per connection
			if id := (sessionKey{key, owner}); mine[id] != nil {
				found = append(found, booked{p, id})
			}
			continue
		}
		for id := range mine {
			if id.key == key {
				found = append(found, booked{p, id})
			}
		}
	}
	ss.mu.Unlock()
	for _, b := range found {
		ss.drop(b.p, b.id)
	}
}
