package proxy

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Re-attaching a session lock: LOCK.ACQUIRE key owner ttl-ms SESSION sent by
// the lock's current holder (the lock is held with owner as its value)
// does not answer nil, as it would to anyone else: it extends the lock to
// ttl-ms by quorum, as LOCK.EXTEND does, and moves it to this connection:
// the round (quorum.Engine.Reattach) notes a new round id beside the lock,
// and this connection books that one. The connection that booked it before,
// on this replica or another, renews it and releases it at its close only
// while the nodes name its own round: once the lock moved, neither its
// renewals (which could shorten the TTL this reply promised) nor a late
// release at its close reach it. It answers the lock's token, the same one
// its first grant answered (one lock, one token). A replica that shuts down
// gracefully leaves its session locks to their TTL (sessions.closed); their
// holders reconnect to another replica and re-attach them there, so a
// rolling upgrade behind a load balancer loses no lock.
//
// The lock moves when the re-attach's round is sent, as a ZooKeeper
// session moves to the server a client reconnects through: answered or
// not. This connection books the round as soon as it is decided, whatever
// the verdict (a round that failed to reach a quorum in time may still
// have landed), and its close releases what the round moved here; a
// connection the lock was booked on before no longer holds it, here (once
// the round succeeded, its booking goes) or on another replica (its
// renewals and its release name its old round). A client that sends a
// re-attach and does not see it succeed (it hung up, timed out, or was
// answered an error) re-attaches again on a live connection before it
// relies on the lock: the answer there says whether it still holds it.
// Only a client that hangs up before the round is sent moves nothing.
//
// Nothing is granted that the owner did not hold: the extend round succeeds
// only where a quorum holds key with owner's value, exactly as LOCK.EXTEND's
// (owner is the capability either way). A lock that expired meanwhile and
// is free is taken anew by the acquire before this, with a new token; one
// another owner took answers nil or waits, as any refused LOCK.ACQUIRE.

// reattach re-attaches a SESSION acquire refused because the lock is taken:
// it reports whether it answered (the owner holds the lock, or the round
// failed); false leaves the refusal to the caller.
func (s *lockService) reattach(c *request, a acquireArgs) bool {
	// Watched while it runs: a client that hangs up before the round is
	// sent cancels it (nothing moves); once sent, it runs to its verdict.
	leave := c.peer.watchHangup()
	defer leave()
	start := time.Now()
	id := sessionKey{a.key, a.owner}
	defer s.sessions.move(id)()
	g, err := s.engine.Reattach(c.ctx, a.key, a.owner, a.ttl, func(g quorum.Grant) {
		// Booked here, before the next re-attach of this lock through this
		// replica runs (its round moves the lock again): the last booking
		// names the round the backends name.
		if h := reattachHook.Load(); h != nil {
			(*h)("moved")
		}
		c.bookSession(id, a.ttl, g)
	})
	c.track(kindExtend, start, g, err)
	switch {
	case errors.Is(err, quorum.ErrNotHeld):
		return false // another owner's: the refusal stands
	case errors.Is(err, quorum.ErrTokenUnsettled):
		c.writeErr(errReattachUnsettled)
		return true
	case errors.Is(err, quorum.ErrSuperseded):
		c.writeErr(errReattachSuperseded)
		return true
	case err != nil:
		c.writeErr(err) // booked all the same where the round was sent: see above
		return true
	}
	// The lock is this connection's: a connection of the same owner that
	// has it booked here with the round this one moved it from no longer
	// holds it (its renewals would not reach it anyway), nor releases
	// anything at its close.
	if g.From != "" {
		s.unbookRound(a.key, a.owner, c.peer, g.From)
	}
	e, err := s.engine.TokenOf(c.ctx, a.key)
	switch {
	case err != nil:
		c.writeErr(err)
	case !e.Found || e.Value != a.owner:
		// Gone since the extend (its window cannot have ended: the
		// extend just renewed it; a release or a force release did it):
		// not held.
		s.sessions.dropRound(c.peer, id, g.Round)
		c.writeNull()
	case e.Token == 0:
		// Held, but its holders' notes do not agree on one token yet (a
		// re-attach that reached some of them only), or the read found
		// the holders split between rounds (this one's and the one it
		// moved from: a node it missed, a read that missed others):
		// asking again moves the rest, and never answers a token that is
		// not the lock's. The booking stays: the lock may well be here.
		c.writeErr(errReattachNoToken)
	case e.Round != g.Round && !s.sessions.booksRound(c.peer, id, e.Round):
		// A token Q holders of another round note (a read split between
		// rounds answers none, above): no longer the lock this round
		// moved. Released and taken again by its owner on another
		// connection, or moved on by a later re-attach of another
		// connection (helper-73: the token read found the next life's
		// token, and answered it here, where nothing renews that lock).
		// Not held here: this booking goes (a later re-attach through
		// this connection booked its own round, which stays).
		s.sessions.dropRound(c.peer, id, g.Round)
		if quorum.RoundBefore(g.Round, e.Round) {
			c.writeErr(errReattachSuperseded)
		} else {
			c.writeNull()
		}
	default:
		c.wr.WriteInt64(e.Token)
	}
	return true
}

// reattachHook, nil but in tests, is called once a re-attach's round moved
// the lock ("moved"), before this connection books it.
var reattachHook atomic.Pointer[func(stage string)]

var errReattachUnsettled = respError("NOQUORUM the lock is held by this owner, but its holders do not note one token yet (its acquire may still be running); nothing moved: send LOCK.ACQUIRE again")

var errReattachSuperseded = respError("NOQUORUM the lock was re-attached by a request of its owner that arrived after this one; nothing moved here: send LOCK.ACQUIRE again to move it here")

var errReattachNoToken = respError("NOQUORUM re-attached, but its holders do not agree on its token yet; send LOCK.ACQUIRE again")
