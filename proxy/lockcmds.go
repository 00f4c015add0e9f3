package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// cmdSet: SET key value NX PX|EX ttl is an acquire round. Anything else that
// would write without the lock protocol is refused.
func (s *Server) cmdSet(c *request, args [][]byte) {
	req, err := parseSet(args[1:], time.Now())
	if err != nil {
		c.writeErr(err)
		return
	}
	if req.HasIfEq && !req.Get {
		s.setIfEq(c, req)
		return
	}
	if req.XX && !req.Get {
		s.setXX(c, req)
		return
	}
	if !req.NX || req.XX || req.Get {
		c.writeErr(errLockWriteOnly)
		return
	}
	ttl, err := s.lockTTL(req)
	if err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.Acquire(c.ctx, req.Key, req.Value, ttl)
	s.track(c, kindAcquire, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrTaken):
		c.writeNull() // exactly what one Redis answers for a taken lock
	default:
		c.writeErr(err)
	}
}

// lockTTL is the TTL an acquire asks for: the one given, else the configured
// default, within max_ttl.
func (s *Server) lockTTL(req setArgs) (time.Duration, error) {
	ttl := req.TTL
	if !req.HasTTL {
		if s.opts.defaultTTL == 0 {
			return 0, respError("ERR a lock needs a TTL: SET key value NX PX <ms> (a lock without expiry is never freed if its owner dies; operators may set default_ttl)")
		}
		ttl = s.opts.defaultTTL
	}
	return ttl, s.checkTTL(ttl)
}

func (s *Server) checkTTL(ttl time.Duration) error {
	if max := s.engine.MaxTTL(); ttl > max {
		return respError(fmt.Sprintf("ERR lock TTL %d ms exceeds max_ttl %d ms", ttl.Milliseconds(), max.Milliseconds()))
	}
	if min := s.engine.MinTTL(); ttl < min {
		return respError(fmt.Sprintf("ERR lock TTL %d ms can never be granted: a lock must outlast min_validity (%d ms) and give "+
			"each backend a millisecond to answer at timeout_factor %g; ask for at least %d ms", ttl.Milliseconds(),
			s.engine.MinValidity().Milliseconds(), s.engine.TimeoutFactor(), min.Milliseconds()))
	}
	return nil
}

// fencingCounters are keys read as per-node counters (Engine.ReadCounter):
// Redisson's RFencedLock reads its token so.
const fencingCounters = "redisson_lock_token:"

func (s *Server) cmdGet(c *request, args [][]byte) {
	if strings.HasPrefix(string(args[1]), fencingCounters) {
		s.getCounter(c, string(args[1]))
		return
	}
	start := time.Now()
	e, err := s.engine.Get(c.ctx, string(args[1]))
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
	case e.Found && e.Type != quorum.TypeString:
		c.wr.WriteError("WRONGTYPE Operation against a key holding the wrong kind of value")
	case e.Found:
		c.wr.WriteBulkString(e.Value)
	default:
		c.writeNull()
	}
}

func (s *Server) getCounter(c *request, key string) {
	start := time.Now()
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
}

// cmdPTTL answers the conservative remaining TTL of the majority value in ms:
// -2 when no value holds a quorum, -1 for a key without expiry.
func (s *Server) cmdPTTL(c *request, args [][]byte) {
	if ttl, ok := s.readTTL(c, args[1]); ok {
		c.wr.WriteInt64(ttl.Milliseconds())
	}
}

// cmdTTL is PTTL in seconds, rounded as Redis rounds.
func (s *Server) cmdTTL(c *request, args [][]byte) {
	if ttl, ok := s.readTTL(c, args[1]); ok {
		if ttl < 0 {
			c.wr.WriteInt64(int64(ttl / time.Millisecond))
			return
		}
		c.wr.WriteInt64((ttl.Milliseconds() + 500) / 1000)
	}
}

// readTTL returns -2ms / -1ms / the remaining TTL, or writes the error.
func (s *Server) readTTL(c *request, key []byte) (time.Duration, bool) {
	start := time.Now()
	e, err := s.engine.Read(c.ctx, string(key))
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
		return 0, false
	case !e.Found:
		return -2 * time.Millisecond, true
	case e.TTL < 0:
		return -1 * time.Millisecond, true
	}
	return e.TTL, true
}

func (s *Server) cmdExists(c *request, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		start := time.Now()
		e, err := s.engine.Get(c.ctx, string(key))
		s.metrics.observe(kindRead, start, err, 0)
		if err != nil {
			c.writeErr(err)
			return
		}
		if e.Found {
			n++
		}
	}
	c.wr.WriteInt(n)
}

func errForceRelease(what string) error {
	return respError(fmt.Sprintf("ERR %s is disabled here (allow_force_release: false): release a lock with its owner's compare-and-delete script", what))
}

// cmdDel force-releases: the key goes on every backend whoever holds it.
func (s *Server) cmdDel(c *request, args [][]byte) {
	if !s.opts.allowForceRelease {
		c.writeErr(errForceRelease(strings.ToUpper(string(args[0]))))
		return
	}
	n := 0
	for _, key := range args[1:] {
		start := time.Now()
		existed, err := s.engine.ForceRelease(c.ctx, string(key))
		s.metrics.observe(kindForceRelease, start, err, 0)
		if err != nil {
			c.writeErr(err)
			return
		}
		if existed {
			n++
		}
	}
	c.wr.WriteInt(n)
}

// forceRelease deletes key whoever holds it, as DEL does, and tells the
// waiters on channel message when a quorum had it; what names the command
// in the refusal when force release is off. ok is false when it wrote an
// error reply instead.
func (s *Server) forceRelease(c *request, what, key, channel, message string) (existed, ok bool) {
	if !s.opts.allowForceRelease {
		c.writeErr(errForceRelease(what))
		return false, false
	}
	start := time.Now()
	existed, err := s.engine.ForceRelease(c.ctx, key)
	s.metrics.observe(kindForceRelease, start, err, 0)
	if err != nil {
		c.writeErr(err)
		return false, false
	}
	if existed {
		s.bus.Notify(channel, message)
	}
	return existed, true
}

// writeErr writes err as one RESP error line.
func (c *request) writeErr(err error) { c.wr.WriteError(replyText(err)) }

// setIfEq: SET key value IFEQ value PX ms (Redis 8.4's compare-and-set, as
// Spring uses it to renew) extends the owner's lock: OK, or nil when the
// caller does not hold it. Changing the owner value this way is refused.
func (s *Server) setIfEq(c *request, req setArgs) {
	switch {
	case req.IfEq != req.Value:
		c.writeErr(respError("ERR redlock-proxy takes SET ... IFEQ only to renew a lock: the new value must equal the IFEQ value"))
		return
	case !req.HasTTL:
		c.writeErr(respError("ERR a lock renewal needs a TTL: SET key value IFEQ value PX <ms>"))
		return
	}
	s.renewSet(c, req, s.engine.Extend)
}

// renewSet runs an extend round for a SET that renews (IFEQ) or overwrites
// (XX) a lock: OK, or nil when no quorum held it.
func (s *Server) renewSet(c *request, req setArgs, round func(ctx context.Context, key, value string, ttl time.Duration) (quorum.Grant, error)) {
	if err := s.checkTTL(req.TTL); err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := round(c.ctx, req.Key, req.Value, req.TTL)
	s.track(c, kindExtend, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// setXX: SET key value XX PX ms overwrites a lock whoever holds it, as
// ShedLock does to keep its lock until lockAtLeastFor: OK, or nil when no
// quorum had the key. It can take over another owner's lock, so it is a
// force operation, refused with allow_force_release: false.
func (s *Server) setXX(c *request, req setArgs) {
	if !s.opts.allowForceRelease {
		c.writeErr(errForceRelease("SET ... XX"))
		return
	}
	if !req.HasTTL {
		c.writeErr(respError("ERR SET ... XX needs a TTL here: SET key value XX PX <ms>"))
		return
	}
	s.renewSet(c, req, s.engine.Overwrite)
}

// cmdDelEx: DELEX key IFEQ value (Redis 8.4) releases the owner's lock: 1, or 0.
func (s *Server) cmdDelEx(c *request, args [][]byte) {
	if len(args) != 4 || !equalFold(args[2], "ifeq") {
		c.writeErr(respError("ERR redlock-proxy takes DELEX only as DELEX key IFEQ value (a compare-and-delete release)"))
		return
	}
	s.release(c, string(args[1]), string(args[3]), falseZero)
}

// cmdDelIfEq: DELIFEQ key value (Valkey 9) releases the owner's lock: 1, or 0.
func (s *Server) cmdDelIfEq(c *request, args [][]byte) {
	s.release(c, string(args[1]), string(args[2]), falseZero)
}
