package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// cmdEval: EVAL script numkeys key... arg... runs a recognised lock script as
// a quorum round. The script itself never reaches a backend.
func (s *Server) cmdEval(c *request, args [][]byte) {
	sha, kind, ok := s.scripts.recognise(c.tenant(), string(args[1]))
	if !ok {
		c.writeErr(unknownScript(sha))
		return
	}
	s.runScript(c, sha, kind, args[2:])
}

// cmdEvalSHA runs a script this proxy has seen (or knows) by SHA1; any other
// SHA1 gets NOSCRIPT, on which every client falls back to EVAL.
func (s *Server) cmdEvalSHA(c *request, args [][]byte) {
	kind, ok := s.scripts.bySHA(c.tenant(), string(args[1]))
	if !ok {
		c.writeErr(errNoScript)
		return
	}
	s.runScript(c, string(args[1]), kind, args[2:])
}

func unknownScript(sha string) error {
	return respError(fmt.Sprintf("ERR unknown script %s: redlock-proxy runs only lock scripts it recognises and never forwards "+
		"one; an operator can register it under scripts: in the config (sha1, meaning: release|extend|acquire, key, owner, ttl)", sha))
}

// parseMillis reads a script's TTL argument in ms; anything but a positive
// integer that fits a time.Duration gets Redis's "invalid expire time in
// '<cmd>' command", as the script's own SET or PEXPIRE would.
func parseMillis(arg []byte, cmd string) (time.Duration, error) {
	ms, err := strconv.ParseInt(string(arg), 10, 64)
	if err != nil || ms <= 0 || ms > int64(time.Duration(1<<62)/time.Millisecond) {
		return 0, errInvalidExpire(cmd)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// runScript splits numkeys key... arg... as Redis does and runs the meaning.
func (s *Server) runScript(c *request, sha string, kind scriptKind, rest [][]byte) {
	numKeys, err := strconv.Atoi(string(rest[0]))
	switch {
	case err != nil:
		c.writeErr(errNotInteger)
		return
	case numKeys < 0:
		c.writeErr(respError("ERR Number of keys can't be negative"))
		return
	case numKeys > len(rest)-1:
		c.writeErr(respError("ERR Number of keys can't be greater than number of args"))
		return
	}
	keys, argv := rest[1:1+numKeys], rest[1+numKeys:]
	lsha := strings.ToLower(sha)
	if g, ok := s.scripts.custom[lsha]; ok {
		if keys, argv, ok = g.remap(keys, argv); !ok {
			c.writeErr(scriptArgs(sha, kind, fmt.Sprintf("KEYS[%d] and ARGV[%d] (and ARGV[%d]) as registered", g.key, g.owner, g.ttl)))
			return
		}
	}
	if dbFirst[lsha] {
		if len(argv) < 1 || string(argv[0]) != "0" {
			c.writeErr(errDBIndex)
			return
		}
		argv = argv[1:]
	}
	switch kind {
	case scriptRelease, scriptReleaseMissing:
		if len(keys) < 1 || len(argv) < 1 {
			c.writeErr(scriptArgs(sha, kind, "1 key and 1 argument (the owner value)"))
			return
		}
		no := falseZero
		if kind == scriptReleaseMissing {
			no = falseMissing
		}
		s.release(c, string(keys[0]), string(argv[0]), no)
	case scriptAcquireAll, scriptExtendAll, scriptReleaseAll:
		if len(keys) < 1 || len(argv) < 1 || kind != scriptReleaseAll && len(argv) < 2 {
			c.writeErr(scriptArgs(sha, kind, "keys and the owner value (and the TTL in ms)"))
			return
		}
		var ttl time.Duration
		if kind != scriptReleaseAll {
			if ttl, err = parseMillis(argv[1], "set"); err != nil {
				c.writeErr(err)
				return
			}
		}
		s.allKeys(c, kind, keys, string(argv[0]), ttl)
	case scriptOwnerPTTL:
		if len(keys) < 1 || len(argv) < 1 {
			c.writeErr(scriptArgs(sha, kind, "1 key and 1 argument (the owner value)"))
			return
		}
		s.ownerPTTL(c, string(keys[0]), string(argv[0]))
	case scriptObtain:
		if len(keys) < 1 || len(argv) < 3 {
			c.writeErr(scriptArgs(sha, kind, "1 key and 3 arguments (value, token length, TTL in ms)"))
			return
		}
		ttl, err := parseMillis(argv[2], "set")
		if err != nil {
			c.writeErr(err)
			return
		}
		s.obtain(c, string(keys[0]), string(argv[0]), ttl, false)
	case scriptAcquire:
		if len(keys) < 1 || len(argv) < 2 {
			c.writeErr(scriptArgs(sha, kind, "1 key and 2 arguments (the owner value and the TTL in ms)"))
			return
		}
		ttl, err := parseMillis(argv[1], "set")
		if err != nil {
			c.writeErr(err)
			return
		}
		s.acquireOne(c, string(keys[0]), string(argv[0]), ttl)
	case scriptHashAcquire, scriptFencedAcquire, scriptFencedTryAcquire, scriptHashRelease, scriptHashExtend,
		scriptHashExtendAll, scriptForceUnlock:
		s.redissonScript(c, sha, kind, keys, argv)
	case scriptSpringObtain, scriptSpringRelease, scriptSpringReleaseNotify, scriptSpringRenew,
		scriptSpringReleaseNotifyKey, scriptSpringDeleteNotify:
		s.springScript(c, sha, kind, keys, argv)
	case scriptExtend, scriptExtendPy, scriptExtendOrAcquire:
		if len(keys) < 1 || len(argv) < 2 {
			c.writeErr(scriptArgs(sha, kind, "1 key and 2 arguments (the owner value and the TTL in ms)"))
			return
		}
		ttl, err := parseMillis(argv[1], "pexpire")
		if err != nil {
			c.writeErr(err)
			return
		}
		switch {
		case kind == scriptExtendPy && (len(argv) < 3 || string(argv[2]) == "0"):
			s.extendBy(c, string(keys[0]), string(argv[0]), ttl)
		default:
			s.extend(c, string(keys[0]), string(argv[0]), ttl, kind == scriptExtendOrAcquire, falseZero)
		}
	}
}

// extendBy adds to the TTL the owner holds on a quorum now (redis-py's
// extend without replace_ttl): 0 when the caller does not hold the lock.
func (s *Server) extendBy(c *request, key, value string, add time.Duration) {
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

func scriptArgs(sha string, kind scriptKind, want string) error {
	return respError(fmt.Sprintf("ERR script %s (%s) needs %s", sha, kind, want))
}

// falseReply is how a script says "no": 0, Lua false (a nil reply), or
// redsync's -1 for a key nobody holds.
type falseReply uint8

const (
	falseZero falseReply = iota
	falseNil
	falseMissing // 0, or -1 when no value holds the key on a quorum
)

// writeFalse writes a script's "no".
func (c *request) writeFalse(f falseReply) {
	if f == falseNil {
		c.writeNull()
		return
	}
	c.wr.WriteInt(0)
}

// release answers 1 when a quorum deleted the owner's value, "no" when the
// caller did not hold it on a majority; it reports whether it released.
func (s *Server) release(c *request, key, value string, no falseReply) (released bool) {
	start := time.Now()
	err := s.engine.Release(c.ctx, key, value)
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

// extend answers 1 when a quorum took the new TTL, 0 when the caller did
// not hold the lock on a majority. With orAcquire (redsync's touch with
// SetNX), a lock nobody holds is taken again instead: 1 either way, 0 when
// another owner has it.
func (s *Server) extend(c *request, key, value string, ttl time.Duration, orAcquire bool, no falseReply) {
	if err := s.checkTTL(ttl); err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.Extend(c.ctx, key, value, ttl)
	s.track(c, kindExtend, start, g, err)
	if orAcquire && errors.Is(err, quorum.ErrNotHeld) {
		start = time.Now()
		g, err = s.engine.Acquire(c.ctx, key, value, ttl)
		s.track(c, kindAcquire, start, g, err)
	}
	switch {
	case err == nil:
		c.wr.WriteInt(1)
	case errors.Is(err, quorum.ErrNotHeld), errors.Is(err, quorum.ErrTaken):
		c.writeFalse(no)
	default:
		c.writeErr(err)
	}
}

// cmdScript: SCRIPT LOAD | EXISTS | FLUSH.
func (s *Server) cmdScript(c *request, args [][]byte) {
	sub := args[1]
	switch {
	case equalFold(sub, "load") && len(args) == 3:
		sha, _, ok := s.scripts.recognise(c.tenant(), string(args[2]))
		if !ok {
			c.writeErr(unknownScript(sha))
			return
		}
		c.wr.WriteBulkString(sha)
	case equalFold(sub, "exists") && len(args) >= 3:
		c.wr.WriteArray(len(args) - 2)
		for _, sha := range args[2:] {
			if _, ok := s.scripts.bySHA(c.tenant(), string(sha)); ok {
				c.wr.WriteInt(1)
			} else {
				c.wr.WriteInt(0)
			}
		}
	case equalFold(sub, "flush") && len(args) <= 3:
		s.scripts.flush(c.tenant())
		c.wr.WriteString("OK")
	case equalFold(sub, "load"), equalFold(sub, "exists"), equalFold(sub, "flush"):
		c.writeErr(respError(fmt.Sprintf("ERR wrong number of arguments for 'script|%s' command", string(sub))))
	default:
		c.writeErr(unknownSubcommand(sub, "SCRIPT"))
	}
}

func unknownSubcommand(sub []byte, cmd string) error {
	return respError(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", truncate(sub, 128), cmd))
}

// obtain is bsm/redislock's obtain: +OK when acquired, or when the caller
// already holds the lock with this very value (its TTL is then renewed);
// nil when another owner has it. With integer (Spring's obtain), yes is 1.
func (s *Server) obtain(c *request, key, value string, ttl time.Duration, integer bool) {
	if err := s.checkTTL(ttl); err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.Acquire(c.ctx, key, value, ttl)
	s.track(c, kindAcquire, start, g, err)
	if errors.Is(err, quorum.ErrTaken) {
		if e, rerr := s.engine.Get(c.ctx, key); rerr == nil && e.Found && e.Value == value {
			start = time.Now()
			g, err = s.engine.Extend(c.ctx, key, value, ttl)
			s.track(c, kindExtend, start, g, err)
		}
	}
	switch {
	case err == nil && integer:
		c.wr.WriteInt(1)
	case err == nil:
		c.wr.WriteString("OK")
	case errors.Is(err, quorum.ErrTaken), errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// ownerPTTL answers the remaining TTL in ms when value holds key on a
// quorum, else -3 (bsm/redislock's pttl script).
func (s *Server) ownerPTTL(c *request, key, value string) {
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

// acquireOne is a registered acquire script: 1 when acquired, 0 when taken.
func (s *Server) acquireOne(c *request, key, value string, ttl time.Duration) {
	if err := s.checkTTL(ttl); err != nil {
		c.writeErr(err)
		return
	}
	start := time.Now()
	g, err := s.engine.Acquire(c.ctx, key, value, ttl)
	s.track(c, kindAcquire, start, g, err)
	switch {
	case err == nil:
		c.wr.WriteInt(1)
	case errors.Is(err, quorum.ErrTaken):
		c.wr.WriteInt(0)
	default:
		c.writeErr(err)
	}
}
