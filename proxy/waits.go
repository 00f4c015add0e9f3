package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Fair waiting (LOCK.ACQUIRE ... WAIT ms): a request the lock refuses joins
// the key's queue on the backends (quorum.Enqueue: arrival order across
// replicas) under its owner's name, and tries again when woken: a release
// of the lock or a waiter leaving publishes on the key's wait channel
// through the wake bus (every replica hears it); the holder's TTL and
// lock-delay, or the lease of the waiter ahead, as the refusal reported,
// set a timer. Nothing polls. While it waits its replica renews its place
// every session_tick, in one batched beat for all its waiters (beats.go) (a waiter whose replica died leaves after its lease);
// a waiter that times out or hangs up leaves the queue at once.

var errShuttingDown = respError("ERR the proxy is shutting down: WAIT ended; ask another replica")

// waitLease is how long a waiter keeps its place without a renewal.
func (s *lockService) waitLease() time.Duration { return 4 * s.opts.SessionTick }

// waitChannel is the wake bus channel of key's waiters.
func waitChannel(key string) string { return quorum.InternalPrefix + "wait:" + key }

// waitWake is a waiter's end of its wait channel.
type waitWake chan struct{}

// Deliver implements wake.Subscriber: it never blocks.
func (w waitWake) Deliver(_, _, _ string) {
	select {
	case w <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// acquireWaiting runs LOCK.ACQUIRE with WAIT: the lock, or nil once the
// wait ran out.
func (s *lockService) acquireWaiting(c *request, a acquireArgs) {
	conn, user := fmt.Sprint("conn:", c.peer.ident()), "user:"+c.userName()
	lim := s.opts.Limits
	if !s.quotas.take(conn, quotaUse{qWaiters: 1}, quotaUse{qWaiters: lim.MaxWaitersPerClient}) {
		c.writeErr(limitRefusal(fmt.Sprintf("ERR too many waiters on this connection (max_waiters_per_client %d)", lim.MaxWaitersPerClient)))
		return
	}
	defer s.quotas.give(conn, quotaUse{qWaiters: 1})
	if !s.quotas.take(user, quotaUse{qWaiters: 1}, quotaUse{qWaiters: lim.MaxWaitersPerUser}) {
		c.writeErr(limitRefusal(fmt.Sprintf("ERR too many waiters for user %s (max_waiters_per_user %d)", c.userName(), lim.MaxWaitersPerUser)))
		return
	}
	defer s.quotas.give(user, quotaUse{qWaiters: 1})
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	s.waiters.add(a.key, 1)
	defer s.waiters.add(a.key, -1)
	leave := c.peer.watchHangup()
	defer leave()
	ctx := c.peer.context() // without the arrival: each try has its own
	wake, channel := make(waitWake, 1), waitChannel(a.key)
	s.bus.Subscribe(ctx, wake, channel) // before the first try: no wake-up falls between
	defer s.bus.Unsubscribe(wake, channel)
	expired := time.NewTimer(time.Until(c.arrived.Add(a.wait)))
	defer expired.Stop()
	beat := s.beats.join(a.key, a.owner) // its place renewed with every other waiter's (beats.go)
	defer s.beats.leave(beat)
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	queued := false
	acquire := s.engine.AcquireWaiting
	if a.session {
		acquire = s.engine.AcquireSession // a lock the session renews: no extend shortens it
	}
	for {
		start := time.Now()
		g, err := acquire(quorum.WithArrival(ctx, start), a.key, a.owner, a.ttl)
		c.track(kindAcquire, start, g, err)
		var rerr *quorum.RoundError
		switch {
		case err == nil:
			// Its place goes with its release (the release takes the owner
			// out of the queue), or with its lease.
			s.granted(c, a, g)
			return
		case !errors.Is(err, quorum.ErrTaken):
			s.leaveQueue(a, queued)
			c.writeErr(err)
			return
		case !queued && a.session && s.reattach(c, a):
			return // its holder re-attached it
		case !queued:
			if err := s.engine.Enqueue(ctx, a.key, a.owner, s.waitLease()); err != nil {
				c.writeErr(err)
				return
			}
			queued = true
			continue // it may be first already
		case errors.As(err, &rerr) && rerr.RetryIn > 0:
			retry.Reset(rerr.RetryIn)
		}
		for woken := false; !woken; {
			select {
			case <-wake:
				woken = true
			case <-retry.C:
				woken = true
			case <-beat.gone:
				if queued {
					// Its lease ran out (a pause, a partition): queue again, at the
					// back. Its old place goes first: where it survived (a node
					// that had not purged it), a new add (ZADD NX) would keep its
					// old, smaller ticket there, ahead of waiters that queued
					// meanwhile (model/queue.pml found it). Each node runs the
					// removal before the add sent after it.
					s.engine.Dequeue(a.key, a.owner)
					queued, woken = false, true
				}
			case <-expired.C:
				s.leaveQueue(a, queued)
				c.writeNull()
				return
			case <-ctx.Done():
				s.leaveQueue(a, queued) // hung up, or the proxy closes
				c.writeErr(ctx.Err())
				return
			case <-s.stopWaits:
				s.leaveQueue(a, queued)
				c.writeErr(errShuttingDown)
				return
			}
		}
	}
}

// granted answers a granted LOCK.ACQUIRE with its token, booking a SESSION
// lock with the renewer.
func (s *lockService) granted(c *request, a acquireArgs, g quorum.Grant) {
	if a.session {
		c.bookSession(sessionKey{a.key, a.owner}, a.ttl, g)
	}
	c.wr.WriteInt64(g.Token)
}

// leaveQueue takes a waiter that gives up out of the key's queue and wakes
// the others: the next may be first now.
func (s *lockService) leaveQueue(a acquireArgs, queued bool) {
	if !queued {
		return
	}
	s.engine.Dequeue(a.key, a.owner)
	s.bus.Notify(waitChannel(a.key), "left")
}

// releaseFair releases a native lock and wakes its waiters, if any.
func (s *lockService) releaseFair(ctx context.Context, key, owner string) error {
	waiters, err := s.engine.ReleaseFair(ctx, key, owner)
	if waiters {
		s.bus.Notify(waitChannel(key), "released")
	}
	return err
}

// releaseRound is releaseFair for a session lock whose connection closed:
// only while the nodes still name the round its connection booked (its
// holder may have re-attached it elsewhere: then it is not released) and
// no extend from another connection pinned the window it promised.
func (s *lockService) releaseRound(ctx context.Context, key, owner, round string) error {
	waiters, err := s.engine.ReleaseRound(ctx, key, owner, round)
	if waiters {
		s.bus.Notify(waitChannel(key), "released")
	}
	return err
}
