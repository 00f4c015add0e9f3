package proxy

import (
	"context"
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
// A re-attach moves the lock for good only once its client was answered:
// the token written to a connection that had not hung up. One that was not
// (the client hung up before its reply went out, with a pipeline
// neighbour holding it back or not; or the reply was an error) books
// nothing and moves the lock back (quorum.Engine.Unreattach) to the round
// it moved it from, whose connection, here or on another replica, was
// never told otherwise and renews it on: a renewer that finds the lock
// held by its owner under another round keeps its booking, past its
// window too, until a read finds the lock gone (sessionmoved.go). Each
// backend keeps the round each re-attach replaced there, so a move back
// lands on the round it replaced, and the moves back of a pipeline run
// the last first.
//
// Still open (proxy/openfindings_reattach_test.go, tag openfindings): a
// reply written but lost on its way to the client, or a replica stalled
// between its move and its booking, moves the lock for good; both need a
// two-phase move (the old round kept beside the new one until the new
// connection shows it read its answer).

// Nothing is granted that the owner did not hold: the extend round succeeds
// only where a quorum holds key with owner's value, exactly as LOCK.EXTEND's
// (owner is the capability either way). A lock that expired meanwhile and
// is free is taken anew by the acquire before this, with a new token; one
// another owner took answers nil or waits, as any refused LOCK.ACQUIRE.

// reattach re-attaches a SESSION acquire refused because the lock is taken:
// it reports whether it answered (the owner holds the lock, or the round
// failed); false leaves the refusal to the caller.
func (s *Server) reattach(c *request, a acquireArgs) bool {
	// Watched while it runs: a client that hangs up before the round is
	// sent cancels it; one that hangs up later, until its reply is written
	// (client.hungUp), is not answered, and the lock moves back
	// (afterReply).
	leave := c.peer.watchHangup()
	defer leave()
	id := sessionKey{a.key, a.owner}
	before, had := s.sessions.booking(c.peer, id) // this connection's own, if it re-attaches what it holds
	moving := s.sessions.move(id)
	start := time.Now()
	g, err := s.engine.Reattach(c.ctx, a.key, a.owner, a.ttl, func(g quorum.Grant) {
		// Booked here, before the next re-attach of this lock through this
		// replica runs (its round moves the lock again): the last booking
		// names the round the backends name.
		if h := reattachHook.Load(); h != nil {
			(*h)("moved")
		}
		c.bookSession(id, a.ttl, g)
	})
	s.track(c, kindExtend, start, g, err)
	if err != nil {
		moving()
		switch {
		case errors.Is(err, quorum.ErrNotHeld):
			return false // another owner's: the refusal stands
		case errors.Is(err, quorum.ErrTokenUnsettled):
			c.writeErr(errReattachUnsettled)
		default:
			c.writeErr(err)
		}
		return true
	}
	answered := false
	c.afterReply = func(delivered bool) {
		defer moving()
		if delivered && answered && !c.lapsed {
			// The lock is this connection's: a connection of the same
			// owner that still has it booked with an earlier round (here;
			// a live replica's renewals no longer reach it) neither renews
			// it nor releases it at its close.
			s.unbookBefore(a.key, a.owner, c.peer, g.Round)
			return
		}
		s.moveBack(c.peer, id, g, before, had)
	}
	e, err := s.engine.TokenOf(c.ctx, a.key)
	switch {
	case c.peer.context().Err() != nil:
		c.writeErr(c.peer.context().Err())
	case err != nil:
		c.writeErr(err)
	case !e.Found || e.Value != a.owner:
		// Gone since the extend (its window cannot have ended: the
		// extend just renewed it; a force release did it): not held.
		c.writeNull()
	case e.Token == 0:
		// Held, but its holders' notes do not agree on one token yet (a
		// re-attach that reached some of them only): asking again moves
		// the rest, and never answers a token that is not the lock's.
		c.writeErr(errReattachNoToken)
	default:
		answered = true
		c.wr.WriteInt64(e.Token)
	}
	return true
}

// moveBack undoes a re-attach its client was not answered: the booking it
// made on p goes without a release (or back to before, when p had the lock
// booked already: had), and the lock's note names the round it moved it
// from again, where it still names the re-attach's.
func (s *Server) moveBack(p peer, id sessionKey, g quorum.Grant, before sessionLock, had bool) {
	switch round, booked := s.sessions.roundOf(p, id); {
	case !booked || round != g.Round:
		// p's booking is another request's since (a later re-attach
		// through p, answered or moved back first: replied runs the
		// last first), or released.
	case had:
		s.sessions.rebook(before, g.ReplyBy.Add(s.engine.MinValidity()))
	default:
		s.sessions.drop(p, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.WriteTimeout)
	defer cancel()
	n, err := s.engine.Unreattach(ctx, id.key, id.owner, g)
	s.sessions.movedBack.Add(1)
	if err != nil || n < s.engine.Quorum() {
		s.opts.logger.Debug("a re-attach its client was not answered moved back on fewer than a quorum of nodes (a later re-attach moved the others, the lock is gone, or nodes failed)",
			"moved_back", n, "err", err)
	}
}

// reattachHook, nil but in tests, is called once a re-attach's round moved
// the lock ("moved"), before this connection books it.
var reattachHook atomic.Pointer[func(stage string)]

var errReattachUnsettled = respError("NOQUORUM the lock is held by this owner, but its holders do not note one token yet (its acquire may still be running); nothing moved: send LOCK.ACQUIRE again")

var errReattachNoToken = respError("NOQUORUM re-attached, but its holders do not agree on its token yet; send LOCK.ACQUIRE again")
