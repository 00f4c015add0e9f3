package proxy

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// cmdSet: SET key value NX PX|EX ttl is an acquire round; without a TTL it
// takes a connection-bound lock (boundlocks.go), or one with default_ttl.
// Anything else that would write without the lock protocol is refused.
func (s *redisLocks) cmdSet(c *request, args [][]byte) {
	req, err := parseSet(args[1:], time.Now())
	switch {
	case err != nil:
		c.writeErr(err)
		return
	case req.HasIfEq && !req.Get:
		s.setIfEq(c, req)
		return
	case req.XX && !req.Get:
		s.setXX(c, req)
		return
	case !req.NX || req.XX || req.Get:
		c.writeErr(errLockWriteOnly)
		return
	}
	ttl := req.TTL
	if !req.HasTTL {
		if ttl = s.opts.DefaultTTL; ttl == 0 {
			s.native.acquireBound(c, req) // held until released, while the connection lives
			return
		}
	}
	start := time.Now()
	g, err := s.engine.Acquire(c.ctx, req.Key, req.Value, ttl)
	c.track(kindAcquire, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrTaken):
		c.writeNull() // exactly what one Redis answers for a taken lock
	default:
		c.writeErr(err)
	}
}

// setIfEq: SET key value IFEQ value PX ms (Redis 8.4's compare-and-set, as
// Spring uses it to renew) extends the owner's lock: OK, or nil when the
// caller does not hold it. Changing the owner value this way is refused.
func (s *redisLocks) setIfEq(c *request, req setArgs) {
	switch {
	case req.IfEq != req.Value:
		c.writeErr(respError("ERR redlock-proxy takes SET ... IFEQ only to renew a lock: the new value must equal the IFEQ value"))
	case !req.HasTTL:
		c.writeErr(respError("ERR a lock renewal needs a TTL: SET key value IFEQ value PX <ms>"))
	default:
		s.native.renewSet(c, req, func(_ context.Context, key, value string, ttl time.Duration) (quorum.Grant, error) {
			return s.native.extendLock(c, key, value, ttl) // from the booking connection: no pin
		})
	}
}

// setXX: SET key value XX PX ms overwrites a lock whoever holds it, as
// ShedLock does to keep its lock until lockAtLeastFor: OK, or nil when no
// quorum had the key. It can take over another owner's lock, so it is a
// force operation, refused with allow_force_release: false.
func (s *redisLocks) setXX(c *request, req setArgs) {
	switch {
	case !s.opts.AllowForceRelease:
		c.writeErr(errForceRelease("SET ... XX"))
	case !req.HasTTL:
		c.writeErr(respError("ERR SET ... XX needs a TTL here: SET key value XX PX <ms>"))
	default:
		s.native.renewSet(c, req, func(ctx context.Context, key, value string, ttl time.Duration) (quorum.Grant, error) {
			booked, _ := s.native.sessions.roundOf(c.peer, sessionKey{key, value})
			return s.engine.Overwrite(ctx, key, value, ttl, booked) // pinned unless the lock is still this connection's session's
		})
	}
}

// fencingCounters are keys read as per-node counters (Engine.ReadCounter):
// Redisson's RFencedLock reads its token so.
const fencingCounters = "redisson_lock_token:"

func (s *redisLocks) cmdGet(c *request, args [][]byte) {
	key := string(args[1])
	start := time.Now()
	if strings.HasPrefix(clientKey(key), fencingCounters) { // judged as the client wrote it (any database: selectdb.go)
		n, err := s.engine.ReadCounter(c.ctx, key)
		s.metrics.observe(kindRead, start, err, 0)
		switch {
		case err != nil:
			c.writeErr(err)
		case n == 0:
			c.writeNull()
		default:
			c.wr.WriteBulkString(strconv.FormatInt(n, 10))
		}
		return
	}
	e, err := s.engine.Get(c.ctx, key)
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
	case e.Found && e.Type != quorum.TypeString:
		c.writeErr(errWrongType)
	case e.Found:
		c.wr.WriteBulkString(e.Value)
	default:
		c.writeNull()
	}
}

// cmdPTTL answers the conservative remaining TTL of the majority value in ms:
// -2 when no value holds a quorum, -1 for a key without expiry.
func (s *redisLocks) cmdPTTL(c *request, args [][]byte) {
	if ttl, ok := s.readTTL(c, args[1]); ok {
		c.wr.WriteInt64(ttl.Milliseconds())
	}
}

// cmdTTL is PTTL in seconds, rounded as Redis rounds.
func (s *redisLocks) cmdTTL(c *request, args [][]byte) {
	if ttl, ok := s.readTTL(c, args[1]); ok {
		if ttl < 0 {
			c.wr.WriteInt64(int64(ttl / time.Millisecond))
			return
		}
		c.wr.WriteInt64((ttl.Milliseconds() + 500) / 1000)
	}
}

// readTTL returns -2ms / -1ms / the remaining TTL, or writes the error.
func (s *redisLocks) readTTL(c *request, key []byte) (time.Duration, bool) {
	start := time.Now()
	e, err := s.engine.Read(c.ctx, string(key))
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
		return 0, false
	case !e.Found:
		return -2 * time.Millisecond, true
	case e.TTL < 0, e.Bound(): // a connection-bound lock: no expiry, as on one Redis
		return -1 * time.Millisecond, true
	}
	return e.TTL, true
}

func (s *redisLocks) cmdExists(c *request, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		start := time.Now()
		e, err := s.engine.Get(c.ctx, string(key))
		s.metrics.observe(kindRead, start, err, 0)
		if err != nil {
			c.writeErr(err)
			return
		}
		n += boolInt(e.Found)
	}
	c.wr.WriteInt(n)
}

// cmdDel force-releases: the key goes on every backend whoever holds it.
func (s *redisLocks) cmdDel(c *request, args [][]byte) {
	if len(args) == 2 && strings.HasPrefix(clientKey(string(args[1])), unlockLatchPrefix) && s.delLatch(c, string(args[1])) {
		return
	}
	n := 0
	for _, key := range args[1:] {
		existed, ok := s.native.forceRelease(c, strings.ToUpper(string(args[0])), string(key), "", "", "")
		if !ok {
			return
		}
		n += boolInt(existed)
	}
	c.wr.WriteInt(n)
}

// cmdDelEx: DELEX key IFEQ value (Redis 8.4) releases the owner's lock: 1, or 0.
func (s *redisLocks) cmdDelEx(c *request, args [][]byte) {
	if len(args) != 4 || !equalFold(args[2], "ifeq") {
		c.writeErr(respError("ERR redlock-proxy takes DELEX only as DELEX key IFEQ value (a compare-and-delete release)"))
		return
	}
	s.native.release(c, string(args[1]), string(args[3]), falseZero)
}

// cmdDelIfEq: DELIFEQ key value (Valkey 9) releases the owner's lock: 1, or 0.
func (s *redisLocks) cmdDelIfEq(c *request, args [][]byte) {
	s.native.release(c, string(args[1]), string(args[2]), falseZero)
}

// cmdHExists: HEXISTS key field, by quorum (Redisson's isHeldByCurrentThread).
func (s *redisLocks) cmdHExists(c *request, args [][]byte) {
	start := time.Now()
	e, err := s.engine.ReadField(c.ctx, string(args[1]), string(args[2]), true)
	s.metrics.observe(kindRead, start, err, 0)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.wr.WriteInt(boolInt(e.Found))
}

// cmdHGet: HGET key field, the value a quorum holds (Redisson's getHoldCount).
func (s *redisLocks) cmdHGet(c *request, args [][]byte) {
	start := time.Now()
	e, err := s.engine.ReadField(c.ctx, string(args[1]), string(args[2]), false)
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
	case e.Found:
		c.wr.WriteBulkString(e.Value)
	default:
		c.writeNull()
	}
}

// unlockLatchPrefix starts the name of Redisson's unlock latch (3.24+):
// "redisson_unlock_latch:{<lock>}:<release id>".
const unlockLatchPrefix = "redisson_unlock_latch:"

// delLatch answers DEL of an unlock latch, which Redisson sends after each
// unlock (the unlock waits for it): one round of quorum.DeleteLatch, not a
// force release's two, and served whether or not force releases are
// allowed (deleting a latch releases nothing). It reports false, having
// answered nothing, when something else is under that name (a lock, a
// fencing counter, a semaphore: quorum.ErrNotLatch): its DEL is a force
// release. The prefix is judged on the client's name (databases 1-15 keep
// theirs under a namespace).
func (s *redisLocks) delLatch(c *request, key string) bool {
	existed, err := s.engine.DeleteLatch(c.ctx, key) // no lock round: not in the rounds' metrics (each node's requests are)
	if errors.Is(err, quorum.ErrNotLatch) {
		return false
	}
	if err != nil {
		c.writeErr(err)
		return true
	}
	c.wr.WriteInt(boolInt(existed))
	return true
}
