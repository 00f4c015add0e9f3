package proxy

import (
	"errors"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The native lock commands, for clients that can send a command of their
// own (every Redis client can, through its generic call): each grant comes
// with a fencing token, by quorum, larger than every token before it.
//
//	LOCK.ACQUIRE key owner ttl-ms  -> the token, or nil when another owner holds the lock
//	LOCK.EXTEND key owner ttl-ms   -> 1, or 0 when owner does not hold it
//	LOCK.RELEASE key owner         -> 1, or 0 when owner does not hold it
//	LOCK.TOKEN key [owner]         -> the holder's token (when given, owner's), or nil
//
// A native lock is a plain lock on the backends (key = owner, with a TTL),
// so GET, PTTL and the compare-and-delete scripts see it as any other.

func (s *Server) cmdLockAcquire(c *request, args [][]byte) {
	if len(args) > 4 {
		c.writeErr(respError("ERR LOCK.ACQUIRE takes key owner ttl-ms: its WAIT and SESSION options are not served yet"))
		return
	}
	ttl, err := parseMillis(args[3], "lock.acquire")
	if err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.AcquireFenced(c.ctx, string(args[1]), string(args[2]), ttl)
	s.track(c, kindAcquire, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteInt64(g.Token)
	case errors.Is(err, quorum.ErrTaken):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

func (s *Server) cmdLockExtend(c *request, args [][]byte) {
	ttl, err := parseMillis(args[3], "lock.extend")
	if err != nil {
		c.writeErr(err)
		return
	}
	s.extend(c, string(args[1]), string(args[2]), ttl, false, falseZero)
}

func (s *Server) cmdLockRelease(c *request, args [][]byte) {
	s.release(c, string(args[1]), string(args[2]), falseZero)
}

func (s *Server) cmdLockToken(c *request, args [][]byte) {
	if len(args) > 3 {
		c.writeErr(errWrongArity("lock.token"))
		return
	}
	start := time.Now()
	e, err := s.engine.Token(c.ctx, string(args[1]))
	s.metrics.observe(kindRead, start, err, 0)
	switch {
	case err != nil:
		c.writeErr(err)
	case !e.Found || e.Token == 0, len(args) == 3 && e.Value != string(args[2]):
		c.writeNull()
	default:
		c.wr.WriteInt64(e.Token)
	}
}
