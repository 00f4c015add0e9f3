package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The native lock commands, for clients that can send a command of their
// own (every Redis client can, through its generic call): each grant comes
// with a fencing token, by quorum, larger than every token before it.
//
//	LOCK.ACQUIRE key owner ttl-ms [WAIT ms] [SESSION]  -> the token, or nil when another owner holds the lock (past WAIT);
//	                                                     with SESSION, by the holder: re-attaches it (reattach.go)
//	LOCK.EXTEND key owner ttl-ms   -> 1, or 0 when owner does not hold it
//	LOCK.RELEASE key owner         -> 1, or 0 when owner does not hold it
//	LOCK.TOKEN key [owner]         -> the holder's token (when given, owner's), or nil
//
// A native lock is a plain lock on the backends (key = owner, with a TTL),
// so GET, PTTL and the compare-and-delete scripts see it as any other; and
// any string lock (SET NX PX) gets a token from LOCK.TOKEN.
// With SESSION it is bound to the connection (sessions.go): renewed while
// the connection is open, released when it closes.

// commandDoc is what COMMAND DOCS says of a native command.
type commandDoc struct{ name, summary string }

var nativeDocs = []commandDoc{
	{"lock.acquire", "LOCK.ACQUIRE key owner ttl-ms [WAIT ms] [SESSION]: takes the lock by quorum; the fencing token, or nil " +
		"when another owner holds it (past WAIT ms in the key's fair queue). SESSION: renewed while this connection is open, released when it closes; sent by the lock's holder, it re-attaches the lock to this connection " +
		"and answers its token (after a replica's graceful shutdown left it to its TTL)"},
	{"lock.extend", "LOCK.EXTEND key owner ttl-ms: sets the TTL of owner's lock; 1, or 0 when owner does not hold it"},
	{"lock.release", "LOCK.RELEASE key owner: releases owner's lock and wakes its waiters; 1, or 0 when owner does not hold it"},
	{"lock.token", "LOCK.TOKEN key [owner]: the fencing token of the lock's holder (owner's, when given), or nil; a lock taken with SET NX PX gets one at its first read"},
}

// docOf finds a native command's doc.
func docOf(name string) (commandDoc, bool) {
	for _, d := range nativeDocs {
		if d.name == name {
			return d, true
		}
	}
	return commandDoc{}, false
}

// acquireArgs is LOCK.ACQUIRE's request.
type acquireArgs struct {
	key, owner string
	ttl        time.Duration
	wait       time.Duration // 0: no waiting
	session    bool
}

// parseAcquire reads key owner ttl-ms [WAIT ms] [SESSION].
func (s *lockService) parseAcquire(args [][]byte) (acquireArgs, error) {
	ttl, err := parseMillis(args[3], "lock.acquire")
	if err != nil {
		return acquireArgs{}, err
	}
	a := acquireArgs{key: string(args[1]), owner: string(args[2]), ttl: ttl}
	waited := false
	for i := 4; i < len(args); i++ {
		switch opt := string(args[i]); {
		case strings.EqualFold(opt, "SESSION") && !a.session:
			a.session = true
		case strings.EqualFold(opt, "WAIT") && !waited && i+1 < len(args):
			most := cmp.Or(s.opts.MaxWait, maxWait)
			ms, err := strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil || ms < 0 || ms > most.Milliseconds() {
				return a, respError(fmt.Sprintf("ERR WAIT takes milliseconds from 0 to %d (max_wait)", most.Milliseconds()))
			}
			a.wait, waited = time.Duration(ms)*time.Millisecond, true
			i++
		default:
			return a, errSyntax
		}
	}
	if least := s.minSessionTTL(); a.session && ttl < least {
		return a, respError(fmt.Sprintf("ERR a SESSION lock needs ttl-ms of at least %d: three renewal ticks (session_tick %d ms)",
			least.Milliseconds(), s.opts.SessionTick.Milliseconds()))
	}
	return a, nil
}

func (s *lockService) cmdLockAcquire(c *request, args [][]byte) {
	a, err := s.parseAcquire(args)
	if err != nil {
		c.writeErr(err)
		return
	}
	if a.session {
		unreserve, err := s.sessions.reserveSession(c.peer, c.userName(), sessionKey{a.key, a.owner})
		if err != nil {
			c.writeErr(err)
			return
		}
		defer unreserve()
	}
	if a.wait > 0 {
		s.acquireWaiting(c, a)
		return
	}
	start := time.Now()
	acquire := s.engine.AcquireFenced
	if a.session {
		acquire = s.engine.AcquireSession // a lock the session renews: no extend shortens it
	}
	g, err := acquire(c.ctx, a.key, a.owner, a.ttl)
	c.track(kindAcquire, start, g, err)
	switch {
	case err == nil:
		s.granted(c, a, g)
	case errors.Is(err, quorum.ErrTaken):
		if !a.session || !s.reattach(c, a) {
			c.writeNull()
		}
	default:
		c.writeErr(err)
	}
}

// bookSession hands a session lock the request was granted to the renewer;
// settle takes it back if the grant is revoked.
func (c *request) bookSession(id sessionKey, ttl time.Duration, g quorum.Grant) {
	// The window opened when the granting round began (after a WAIT, long
	// after the request arrived): ReplyBy is its end less min_validity.
	c.s.native.sessions.addAs(c.peer, c.userName(), id, ttl, g.ReplyBy.Add(c.s.engine.MinValidity()), g.Round, g.Token)
	c.grantsMu.Lock()
	c.sessions = append(c.sessions, id)
	c.grantsMu.Unlock()
}

func (s *lockService) cmdLockExtend(c *request, args [][]byte) {
	ttl, err := parseMillis(args[3], "lock.extend")
	if err != nil {
		c.writeErr(err)
		return
	}
	if s.extend(c, string(args[1]), string(args[2]), ttl, false, falseZero) {
		// A session lock's renewals go on with the new TTL.
		s.sessions.extended(c.peer, sessionKey{string(args[1]), string(args[2])}, ttl, c.arrived)
	}
}

func (s *lockService) cmdLockRelease(c *request, args [][]byte) {
	key, owner := string(args[1]), string(args[2])
	// Out of the book first: no renewal after the release.
	s.sessions.drop(c.peer, sessionKey{key, owner})
	s.releaseAs(c, key, owner, falseZero, true)
}

func (s *lockService) cmdLockToken(c *request, args [][]byte) {
	if len(args) > 3 {
		c.writeErr(errWrongArity("lock.token"))
		return
	}
	start := time.Now()
	e, err := s.engine.TokenOf(c.ctx, string(args[1])) // a lock taken by SET NX PX gets its token now
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
