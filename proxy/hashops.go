package proxy

import (
	"errors"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Redisson keeps a lock as a hash of owner ("<uuid>:<threadId>") -> hold
// count, so a thread may take it again; it waits for a release on the
// channel KEYS[2] names. These operations run its scripts as quorum rounds
// with the same layout on every backend and answer as the script would on
// one.

// hashAcquire takes or re-enters a Redisson lock: nil when held, else the
// holder's remaining TTL in ms. A fenced lock also counts o.token; tryLock
// (withToken) then answers {-1, token} or {pttl, -1}.
func (s *scriptService) hashAcquire(c *request, o operands, withToken bool) {
	start := time.Now()
	var g quorum.Grant
	var err error
	if o.rw != "" {
		g, err = s.engine.AcquireRW(c.ctx, o.key, o.owner, o.rw == "write", o.ttl)
	} else {
		g, err = s.engine.AcquireHash(c.ctx, o.key, o.owner, o.ttl, o.token)
	}
	c.track(kindAcquire, start, g, err)
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
// still held, nil when the owner does not hold it.
func (s *scriptService) hashRelease(c *request, o operands) {
	if o.queue != "" && !fairQueueOK(c, o, false) {
		return
	}
	start := time.Now()
	res, err := s.engine.ReleaseHash(c.ctx, o.key, o.owner, o.ttl, o.latch, o.latchTTL, o.absentReleased)
	s.metrics.observe(kindRelease, start, err, 0)
	switch {
	case err == nil && res == quorum.Released && o.queue != "": // RFairLock: its first waiter
		s.wakeFirst(o.queue, o.channel, o.message)
		c.wr.WriteInt(1)
	case err == nil && res == quorum.Released:
		s.bus.Notify(o.channel, o.message)
		c.wr.WriteInt(1)
	case err == nil:
		c.wr.WriteInt(0)
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// hashExtend renews Redisson locks, keys[i] for owners[i], in parallel. One
// key answers 1/0; the batched renewal an array of them.
func (s *scriptService) hashExtend(c *request, keys, owners [][]byte, lease time.Duration, batched bool) {
	renewed := make([]bool, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			start := time.Now()
			g, err := s.engine.ExtendHash(c.ctx, string(key), string(owners[i]), lease)
			c.track(kindExtend, start, g, err)
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
