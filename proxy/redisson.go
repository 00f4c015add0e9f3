package proxy

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Redisson keeps a lock as a hash of owner ("<uuid>:<threadId>") -> hold
// count, so a thread may take it again; it waits for a release on the
// channel KEYS[2] names. These handlers run its scripts as quorum rounds with
// the same layout on every backend and answer as the script would on one.

// unlockShape is where one version of Redisson's unlock keeps its latch.
type unlockShape struct {
	latchTTLArg    int  // ARGV index (1-based) of the latch's TTL; 0: no latch (KEYS[3])
	absentReleased bool // 3.10.0-3.10.5: unlocking a missing lock answers 1 and publishes
}

var unlockShapes = map[string]unlockShape{
	sha1Hex(redissonUnlock):     {latchTTLArg: 5}, // 3.24+: ARGV[4] is the publish command
	sha1Hex(redissonUnlock322):  {},               // 3.22-3.23: ARGV[4] is the publish command, no latch
	sha1Hex(redissonUnlock3106): {},
	sha1Hex(redissonUnlock310):  {absentReleased: true},
}

// hashAcquire takes or re-enters a Redisson lock: nil when held, else the
// holder's remaining TTL in ms. A fenced lock also counts tokenKey; tryLock
// then answers {-1, token} or {pttl, -1}.
func (s *Server) hashAcquire(c *request, key, owner string, lease time.Duration, tokenKey string, withToken bool) {
	if err := s.checkTTL(lease); err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.AcquireHash(c.ctx, key, owner, lease, tokenKey)
	s.track(c, kindAcquire, start, g, err)
	var taken *quorum.HashTaken
	switch {
	case err == nil && withToken:
		c.wr.WriteArray(2)
		c.wr.WriteInt(-1)
		c.wr.WriteInt64(g.Token)
	case err == nil:
		c.writeNull()
	case errors.As(err, &taken):
		wait := max(taken.Wait.Milliseconds(), 1)
		if withToken {
			c.wr.WriteArray(2)
			c.wr.WriteInt64(wait)
			c.wr.WriteInt(-1)
			return
		}
		c.wr.WriteInt64(wait)
	default:
		c.writeErr(err)
	}
}

// hashRelease gives up one hold: 1 released (and the waiters are told), 0
// still held, nil when owner does not hold it.
func (s *Server) hashRelease(c *request, sha string, keys, argv [][]byte) {
	shape := unlockShapes[strings.ToLower(sha)]
	if len(keys) < 2 || len(argv) < 3 || shape.latchTTLArg > 0 && (len(keys) < 3 || len(argv) < shape.latchTTLArg) {
		c.writeErr(scriptArgs(sha, scriptHashRelease, "the lock, channel (and latch) keys; message, lease ms, owner (and latch ms)"))
		return
	}
	lease, err := parseMillis(argv[1], "pexpire")
	if err != nil {
		c.writeErr(err)
		return
	}
	var latch string
	var latchTTL time.Duration
	if shape.latchTTLArg > 0 {
		if latchTTL, err = parseMillis(argv[shape.latchTTLArg-1], "set"); err != nil {
			c.writeErr(err)
			return
		}
		latch = string(keys[2])
	}
	start := time.Now()
	res, err := s.engine.ReleaseHash(c.ctx, string(keys[0]), string(argv[2]), lease, latch, latchTTL, shape.absentReleased)
	s.metrics.observe(kindRelease, start, err, 0)
	switch {
	case err == nil && res == quorum.Released:
		s.bus.Notify(string(keys[1]), string(argv[0]))
		c.wr.WriteInt(1)
	case err == nil:
		c.wr.WriteInt(0)
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// hashExtend renews Redisson locks: KEYS[i] for owner ARGV[i+1], ARGV[1]
// the lease. One key answers 1/0; the batched renewal an array of them.
func (s *Server) hashExtend(c *request, keys, argv [][]byte, batched bool) {
	lease, err := parseMillis(argv[0], "pexpire")
	if err == nil {
		err = s.checkTTL(lease)
	}
	if err != nil {
		c.writeErr(err)
		return
	}
	renewed := make([]bool, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		owner := argv[1] // single: ARGV[2]; batched: ARGV[i+2]
		if batched {
			owner = argv[i+1]
		}
		wg.Go(func() {
			start := time.Now()
			g, err := s.engine.ExtendHash(c.ctx, string(key), string(owner), lease)
			s.track(c, kindExtend, start, g, err)
			renewed[i], errs[i] = err == nil, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, quorum.ErrNotHeld) {
			c.writeErr(err)
			return
		}
	}
	if batched {
		c.wr.WriteArray(len(keys))
	}
	for _, ok := range renewed {
		c.wr.WriteInt(boolInt(ok))
	}
}

// forceUnlock deletes a Redisson lock whoever holds it: 1 (and the waiters
// are told) when a quorum had it, else 0. Refused like DEL when force
// release is off.
func (s *Server) forceUnlock(c *request, keys, argv [][]byte) {
	existed, ok := s.forceRelease(c, "forceUnlock", string(keys[0]), string(keys[1]), string(argv[0]))
	if ok {
		c.wr.WriteInt(boolInt(existed))
	}
}

// cmdHExists: HEXISTS key field, by quorum (Redisson's isHeldByCurrentThread).
func (s *Server) cmdHExists(c *request, args [][]byte) {
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
func (s *Server) cmdHGet(c *request, args [][]byte) {
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

// redissonScript checks a Redisson script's arguments and runs it.
func (s *Server) redissonScript(c *request, sha string, kind scriptKind, keys, argv [][]byte) {
	switch kind {
	case scriptHashAcquire, scriptFencedAcquire, scriptFencedTryAcquire:
		fenced := kind != scriptHashAcquire
		if len(keys) < 1 || len(argv) < 2 || fenced && len(keys) < 2 {
			c.writeErr(scriptArgs(sha, kind, "the lock key (and token key); lease ms and owner"))
			return
		}
		lease, err := parseMillis(argv[0], "pexpire")
		if err != nil {
			c.writeErr(err)
			return
		}
		var tokenKey string
		if fenced {
			tokenKey = string(keys[1])
		}
		s.hashAcquire(c, string(keys[0]), string(argv[1]), lease, tokenKey, kind == scriptFencedTryAcquire)
	case scriptHashRelease:
		s.hashRelease(c, sha, keys, argv)
	case scriptHashExtend, scriptHashExtendAll:
		batched := kind == scriptHashExtendAll
		if len(keys) < 1 || len(argv) < 2 || batched && len(argv) < len(keys)+1 {
			c.writeErr(scriptArgs(sha, kind, "lock keys; lease ms and an owner for each key"))
			return
		}
		if !batched {
			keys = keys[:1]
		}
		s.hashExtend(c, keys, argv, batched)
	case scriptForceUnlock:
		if len(keys) < 2 || len(argv) < 1 {
			c.writeErr(scriptArgs(sha, kind, "the lock and channel keys; the message"))
			return
		}
		s.forceUnlock(c, keys, argv)
	}
}
