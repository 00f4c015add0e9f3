package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The lock operations handlers share: each runs its rounds, records them
// (metrics, and grants for settle) and writes the reply in the shape its
// caller's client expects. TTL limits are the engine's (quorum.TTLError).

// release answers 1 when a quorum deleted the owner's value, "no" when the
// caller did not hold it on a majority; it reports whether it released.
func (s *lockService) release(c *request, key, value string, no falseReply) (released bool) {
	return s.releaseAs(c, key, value, no, false)
}

// releaseAs is release; with fair (a native lock's) it also takes the owner
// out of the key's wait queue and wakes the waiters.
func (s *lockService) releaseAs(c *request, key, value string, no falseReply, fair bool) (released bool) {
	start := time.Now()
	var err error
	if fair {
		s.unbook(key, value) // out of the session book first: no renewal after the release
		err = s.releaseFair(c.ctx, key, value)
	} else {
		err = s.releaseLock(c.ctx, key, value)
	}
	s.metrics.observe(kindRelease, start, err, 0)
	switch {
	case err == nil:
		c.wr.WriteInt(1)
		return true
	case errors.Is(err, quorum.ErrNotHeld) && no == falseMissing:
		if e, rerr := s.engine.Get(c.ctx, key); rerr == nil && !e.Found {
			c.wr.WriteInt(-1)
			return false
		}
		c.wr.WriteInt(0)
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeFalse(no)
	default:
		c.writeErr(err)
	}
	return false
}

// mayNotify reports whether a script may publish on channel, one its caller
// named in its arguments: the caller's own and not too long. Otherwise it
// writes the refusal.
func (c *request) mayNotify(channel string) bool {
	if reserved([]byte(channel)) {
		c.writeErr(errReserved)
		return false
	}
	if !c.owns([]byte(channel)) || len(channel) > maxChannelLen {
		c.writeErr(errChannelPerm)
		return false
	}
	return true
}

// releaseNotify releases, and tells the waiters on channel (one the caller
// named, so checked by mayNotify) with message when it did.
func (s *lockService) releaseNotify(c *request, key, value, channel, message string) {
	if !c.mayNotify(channel) {
		return
	}
	if s.release(c, key, value, falseNil) {
		s.bus.Notify(channel, message)
	}
}

// extend answers 1 when a quorum took the new TTL, "no" when the caller did
// not hold the lock on a majority. With orAcquire (redsync's touch with
// SetNX), a lock nobody holds is taken again instead: 1 either way, "no"
// when another owner has it. It reports whether it answered 1.
func (s *lockService) extend(c *request, key, value string, ttl time.Duration, orAcquire bool, no falseReply) (ok bool) {
	start := time.Now()
	g, err := s.extendLock(c, key, value, ttl)
	c.track(kindExtend, start, g, err)
	if orAcquire && errors.Is(err, quorum.ErrNotHeld) {
		start = time.Now()
		g, err = s.engine.Acquire(c.ctx, key, value, ttl)
		c.track(kindAcquire, start, g, err)
	}
	switch {
	case err == nil:
		c.wr.WriteInt(1)
		return true
	case errors.Is(err, quorum.ErrNotHeld), errors.Is(err, quorum.ErrTaken):
		c.writeFalse(no)
	default:
		c.writeErr(err)
	}
	return false
}

// extendBy adds to the TTL the owner holds on a quorum now (redis-py's
// extend without replace_ttl): 0 when the caller does not hold the lock.
func (s *lockService) extendBy(c *request, key, value string, add time.Duration) {
	e, err := s.engine.Read(c.ctx, key)
	switch {
	case err != nil:
		c.writeErr(err)
	case !e.Found || e.Value != value || e.TTL < 0:
		c.wr.WriteInt(0)
	default:
		s.extend(c, key, value, e.TTL+add, false, falseZero)
	}
}

// renewSet runs an extend round for a SET that renews (IFEQ) or overwrites
// (XX) a lock: OK, or nil when no quorum held it.
func (s *lockService) renewSet(c *request, req setArgs, round func(ctx context.Context, key, value string, ttl time.Duration) (quorum.Grant, error)) {
	start := time.Now()
	g, err := round(c.ctx, req.Key, req.Value, req.TTL)
	c.track(kindExtend, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// obtain is Spring Integration's obtain: 1 when acquired, or when the
// caller already holds the lock with this very value (its TTL is then
// renewed); nil when another owner has it.
func (s *lockService) obtain(c *request, key, value string, ttl time.Duration) {
	start := time.Now()
	g, err := s.engine.Acquire(c.ctx, key, value, ttl)
	c.track(kindAcquire, start, g, err)
	if errors.Is(err, quorum.ErrTaken) {
		if e, rerr := s.engine.Get(c.ctx, key); rerr == nil && e.Found && e.Value == value {
			start = time.Now()
			g, err = s.extendLock(c, key, value, ttl)
			c.track(kindExtend, start, g, err)
		}
	}
	switch {
	case err == nil:
		c.wr.WriteInt(1)
	case errors.Is(err, quorum.ErrTaken), errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// ownerPTTL answers the remaining TTL in ms when value holds key on a
// quorum, else -3 (bsm/redislock's pttl script).
func (s *lockService) ownerPTTL(c *request, key, value string) {
	start := time.Now()
	e, err := s.engine.Read(c.ctx, key)
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
	case !e.Found || e.Value != value:
		c.wr.WriteInt(-3)
	case e.TTL < 0:
		c.wr.WriteInt(-1)
	default:
		c.wr.WriteInt64(e.TTL.Milliseconds())
	}
}

// forceRelease deletes key whoever holds it, as DEL does (with rw "read"
// or "write", only a read-write lock in that mode), and tells the waiters
// on channel message when a quorum had it; what names the command in the
// refusal when force release is off. ok is false when it wrote an error
// reply instead.
func (s *lockService) forceRelease(c *request, what, key, channel, message, rw string) (existed, ok bool) {
	if !s.opts.AllowForceRelease {
		c.writeErr(errForceRelease(what))
		return false, false
	}
	s.unbook(key, "") // no renewal may set it again
	start := time.Now()
	var err error
	if rw != "" {
		existed, err = s.engine.ForceReleaseRW(c.ctx, key, rw == "write")
	} else {
		existed, err = s.engine.ForceRelease(c.ctx, key)
	}
	s.metrics.observe(kindForceRelease, start, err, 0)
	if err != nil {
		c.writeErr(err)
		return false, false
	}
	if existed && channel != "" {
		s.bus.Notify(channel, message)
	}
	return existed, true
}
