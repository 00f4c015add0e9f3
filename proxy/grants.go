package proxy

import (
	"fmt"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// track records a finished acquire or extend round in the metrics and, when
// it granted, holds the grant for the check its reply must pass (settle).
func (c *request) track(kind roundKind, start time.Time, g quorum.Grant, err error) {
	c.s.metrics.observe(kind, start, err, g.Validity)
	if err != nil {
		return
	}
	c.grantsMu.Lock()
	c.grants = append(c.grants, g)
	c.grantsMu.Unlock()
}

// sessionsRenewed reports whether every one of the request's n grants is a
// session lock (or a re-attach) whose window, as the renewer has moved it
// since the round, still leaves the minimum validity: its reply may go out
// late without promising more than is held. A re-attach cannot be rolled
// back (the lock was the owner's before it), so answering it, once renewed,
// is the only answer that leaves the lock with a connection that knows it
// holds it.
func (c *request) sessionsRenewed(now time.Time, n int) bool {
	c.grantsMu.Lock()
	ids := c.sessions
	c.grantsMu.Unlock()
	if len(ids) == 0 || len(ids) != n {
		return false
	}
	for _, id := range ids {
		end, ok := c.s.native.sessions.windowEnd(c.peer, id)
		if !ok || !now.Add(c.s.engine.MinValidity()).Before(end) {
			return false
		}
	}
	return true
}

// settle runs immediately before a request's reply is written. A reply that
// says "granted" may go out only while the caller's window, measured from
// the command's arrival, still leaves the minimum validity: a pipeline
// neighbour, a queue or a pause of this process may have used it up since
// the round decided. Then every grant of the request is revoked (an acquire
// rolled back, its own writes only) before the reply is replaced by the
// failure.
func (c *request) settle() {
	c.grantsMu.Lock()
	grants := c.grants
	c.grants = nil
	c.grantsMu.Unlock()
	now := time.Now()
	lapsed := false
	for _, g := range grants {
		lapsed = lapsed || !now.Before(g.ReplyBy)
	}
	if lapsed && c.sessionsRenewed(now, len(grants)) {
		lapsed = false
	}
	if !lapsed {
		return
	}
	if allMoved(grants) {
		// Re-attaches: nothing to revoke (the lock was the owner's
		// before), and the round moved it to this connection's booking,
		// which keeps renewing it; only the token is not answered.
		c.s.metrics.lapsed.Add(1)
		c.wr.SetBuffer(c.wr.Buffer()[:c.mark])
		c.writeErr(errReattachLapsed)
		return
	}
	c.grantsMu.Lock()
	for _, id := range c.sessions { // out of the book before the revoke: no renewal puts it back
		c.s.native.sessions.drop(c.peer, id)
	}
	c.grantsMu.Unlock()
	for _, g := range grants {
		g.Revoke()
	}
	c.s.metrics.lapsed.Add(1)
	c.wr.SetBuffer(c.wr.Buffer()[:c.mark])
	c.writeErr(respError(fmt.Sprintf("NOQUORUM granted, but the reply could not be written while the lock's window lasted "+
		"(%s after the command arrived, past its TTL less min_validity %s); rolled back",
		now.Sub(c.arrived).Round(time.Millisecond), c.s.engine.MinValidity())))
}

// allMoved reports grants that are all re-attaches (quorum.Grant.Moved).
func allMoved(grants []quorum.Grant) bool {
	for _, g := range grants {
		if !g.Moved() {
			return false
		}
	}
	return len(grants) > 0
}

var errReattachLapsed = respError("NOQUORUM re-attached to this connection, but the reply could not be written while the lock's window lasted; " +
	"it stays with this connection: send LOCK.ACQUIRE again for its token")
