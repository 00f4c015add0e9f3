package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Redisson's RPermitExpirableSemaphore (issue 26), served by quorum as
// slots (quorum.AcquirePermit): a permit is one of the semaphore's slots,
// each a lock, so there are never more holders than permits however the
// backends' answers fall. The semaphore lives in the proxy's own names; the
// client's (KEYS: the semaphore, "{name}:timeout", the channel
// "redisson_sc:{name}") name it and its channel, and the timeouts key is
// never touched. Every permit is leased: a permit without one (Redisson's
// acquire() and tryAcquire() without a lease time) would never lapse, and a
// backend that restarted empty would forget it for good while its holder
// still counted on it, so it is refused. A release (and a permit's set-up)
// wakes the waiters on the channel with the permits free, as the scripts
// publish on one Redis; a waiter refused while permits lapse is told when
// enough of them do for a majority to have a slot.

// errPermitsChange refuses setPermits and addPermits (helper-100): a
// change of the number that failed may land later, even after a later
// change that was answered, and nothing may undo it once grants counted on
// it; a number set only where none is (trySetPermits) has no such race.
var errPermitsChange = respError("ERR redlock-proxy does not serve RPermitExpirableSemaphore's setPermits and addPermits: " +
	"a change of the number of permits that failed could land after a later one; set it once with trySetPermits " +
	"(after delete() to change it, with no permit held)")

var errPermitLease = respError("ERR redlock-proxy serves RPermitExpirableSemaphore permits with a lease only " +
	"(acquire(leaseTime, unit), tryAcquire(waitTime, leaseTime, unit)): a permit without one never lapses, " +
	"and a backend that restarts empty would forget it while its holder still counts on it")

// semaphoreChannelOK answers an error and reports false unless o's channel
// is the one Redisson derives from the semaphore's name
// ("redisson_sc:{<name>}", or "redisson_sc:<name>" for a name with braces).
func semaphoreChannelOK(c *request, o operands) bool {
	name := clientKey(o.key)
	want := "redisson_sc:{" + name + "}"
	if strings.Contains(name, "{") {
		want = "redisson_sc:" + name
	}
	if o.channel != want {
		c.writeErr(respError(fmt.Sprintf("ERR RPermitExpirableSemaphore's channel must be %s, the name Redisson derives from the semaphore's", want)))
		return false
	}
	return c.mayNotify(o.channel)
}

// permits runs one of the semaphore's scripts, answering as it would on
// one Redis.
func (s *scriptService) permits(c *request, o operands) {
	if len(o.argv) < scriptbook.PermitArgs[o.permit] {
		c.writeErr(respError(fmt.Sprintf("ERR RPermitExpirableSemaphore's script needs at least %d ARGV", scriptbook.PermitArgs[o.permit])))
		return
	}
	if !semaphoreChannelOK(c, o) {
		return
	}
	switch o.permit {
	case scriptbook.PermitAcquire:
		s.acquirePermits(c, o)
	case scriptbook.PermitRelease:
		s.releasePermits(c, o, o.argv[:1], false)
	case scriptbook.PermitReleaseAny, scriptbook.PermitReleaseAll:
		if ids, ok := permitIDs(c, o.argv, 3); ok {
			s.releasePermits(c, o, ids, o.permit == scriptbook.PermitReleaseAll)
		}
	case scriptbook.PermitAvailable, scriptbook.PermitTotal, scriptbook.PermitAcquired, scriptbook.PermitLeaseLeft:
		s.readPermits(c, o)
	case scriptbook.PermitSet, scriptbook.PermitAdd:
		c.writeErr(errPermitsChange)
	case scriptbook.PermitTrySet:
		s.initPermits(c, o)
	case scriptbook.PermitLease:
		lease, ok := permitLeaseOf(c, o.argv[1], o.argv[2])
		if !ok {
			return
		}
		start := time.Now()
		g, err := s.engine.ExtendPermit(c.ctx, o.key, string(o.argv[0]), lease)
		c.track(kindExtend, start, g, err)
		s.writeYesNo(c, err)
	}
}

// permitIDs reads the ids after ARGV[from] of a call whose ARGV[1] counts them.
func permitIDs(c *request, argv [][]byte, from int) ([][]byte, bool) {
	n, err := strconv.Atoi(string(argv[0]))
	if err != nil || n != len(argv)-from || n > scriptbook.MaxPermitIDs {
		c.writeErr(respError(fmt.Sprintf("ERR ARGV[1] must count the permit ids after ARGV[%d] (at most %d)", from, scriptbook.MaxPermitIDs)))
		return nil, false
	}
	return argv[from:], true
}

// redissonNoLease is the end Redisson gives a permit without a lease
// (RedissonPermitExpirableSemaphore's nonExpirableTimeout).
const redissonNoLease = "922337203685477"

// permitLeaseOf reads a permit's lease from its end and the client's clock
// (both its ms).
func permitLeaseOf(c *request, end, clock []byte) (time.Duration, bool) {
	if string(end) == redissonNoLease {
		c.writeErr(errPermitLease)
		return 0, false
	}
	e, err1 := strconv.ParseInt(string(end), 10, 64)
	now, err2 := strconv.ParseInt(string(clock), 10, 64)
	if err1 != nil || err2 != nil || e-now <= 0 || e-now > 1<<40 {
		c.writeErr(respError("ERR a permit's lease must end after the client's clock (both in ms)"))
		return 0, false
	}
	return time.Duration(e-now) * time.Millisecond, true
}

// acquirePermits takes every id a permit, each its own round, or none.
func (s *scriptService) acquirePermits(c *request, o operands) {
	ids, ok := permitIDs(c, o.argv, 5)
	if !ok {
		return
	}
	lease, ok := permitLeaseOf(c, o.argv[1], o.argv[2])
	if !ok {
		return
	}
	grants, errs := make([]quorum.Grant, len(ids)), make([]error, len(ids))
	start := time.Now()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { grants[i], errs[i] = s.engine.AcquirePermit(c.ctx, o.key, string(id), lease) })
	}
	wg.Wait()
	var failed error                 // a round's error: it says more than a refusal
	var refused *quorum.PermitsTaken // else the refusal with the soonest wait
	for _, err := range errs {
		var taken *quorum.PermitsTaken
		switch {
		case err == nil:
		case errors.As(err, &taken):
			if refused == nil || taken.Wait > 0 && (refused.Wait == 0 || taken.Wait < refused.Wait) {
				refused = taken
			}
		default:
			failed = err
		}
	}
	if failed == nil && refused != nil {
		failed = refused
	}
	for i, g := range grants {
		switch {
		case failed == nil:
			c.track(kindAcquire, start, g, nil)
		case errs[i] == nil:
			g.Revoke() // all or none
			s.metrics.observe(kindAcquire, start, failed, 0)
		default:
			s.metrics.observe(kindAcquire, start, errs[i], 0)
		}
	}
	switch {
	case failed == nil:
		c.wr.WriteBulkString("OK")
	case failed != error(refused):
		c.writeErr(failed)
	case refused.Wait > 0: // when to try again, on the client's clock
		now, _ := strconv.ParseInt(string(o.argv[2]), 10, 64)
		c.wr.WriteBulkString(":" + strconv.FormatInt(now+refused.Wait.Milliseconds(), 10))
	default:
		c.writeNull() // wait for a release
	}
}

// releasePermits frees ids' permits, tells the waiters, and answers as the
// script (one id: 1/0; many: how many were held); all: none unless all were
// held (Redisson 3.52).
func (s *scriptService) releasePermits(c *request, o operands, ids [][]byte, all bool) {
	if all {
		p, err := s.engine.ReadPermits(c.ctx, o.key)
		if err != nil {
			c.writeErr(err)
			return
		}
		for _, id := range ids {
			if _, ok := p.Held[string(id)]; !ok {
				c.wr.WriteInt(0)
				return
			}
		}
	}
	start := time.Now()
	var mu sync.Mutex
	var released, free int64
	var failed error
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			n, err := s.engine.ReleasePermit(context.WithoutCancel(c.ctx), o.key, string(id))
			s.metrics.observe(kindRelease, start, err, 0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				released, free = released+1, max(free, n)
			case !errors.Is(err, quorum.ErrNotHeld):
				failed = err
			}
		})
	}
	wg.Wait()
	if released > 0 {
		s.bus.Notify(o.channel, strconv.FormatInt(free, 10))
	}
	if failed != nil && released == 0 {
		c.writeErr(failed)
		return
	}
	c.wr.WriteInt64(released)
}

// readPermits answers the semaphore's reads from what a quorum has.
func (s *scriptService) readPermits(c *request, o operands) {
	p, err := s.engine.ReadPermits(c.ctx, o.key)
	if err != nil {
		c.writeErr(err)
		return
	}
	switch o.permit {
	case scriptbook.PermitAvailable: // the counter's text, as the script answers from GET
		if !p.Set {
			c.wr.WriteInt(0)
			return
		}
		c.wr.WriteBulkString(strconv.FormatInt(p.Permits-int64(len(p.Held)), 10))
	case scriptbook.PermitTotal:
		c.wr.WriteInt64(p.Permits)
	case scriptbook.PermitAcquired:
		c.wr.WriteInt(len(p.Held))
	default: // a permit's lease left
		c.wr.WriteInt64(p.Held[string(o.argv[0])].Milliseconds())
	}
}

// initPermits sets the number of permits where none is (trySetPermits), and tells the waiters.
func (s *scriptService) initPermits(c *request, o operands) {
	n, err := strconv.ParseInt(string(o.argv[0]), 10, 32)
	if err != nil {
		c.writeErr(respError("ERR ARGV[1] must be a number of permits (a 32-bit integer)"))
		return
	}
	done, err := s.engine.InitPermits(c.ctx, o.key, n)
	if err != nil {
		c.writeErr(err)
		return
	}
	if done {
		s.bus.Notify(o.channel, strconv.FormatInt(n, 10))
	}
	c.wr.WriteInt(boolInt(done))
}

// writeYesNo answers 1 for a round that did it, 0 for one that found the
// permit not held, else the error.
func (s *scriptService) writeYesNo(c *request, err error) {
	switch {
	case err == nil:
		c.wr.WriteInt(1)
	case errors.Is(err, quorum.ErrNotHeld):
		c.wr.WriteInt(0)
	default:
		c.writeErr(err)
	}
}
