package proxy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// fairQueueOK answers an error and reports false unless o's queue is the
// one Redisson derives from its lock's name (prefixName:
// "redisson_lock_queue:{<name>}", or "redisson_lock_queue:<name>" for a
// name with braces of its own) or, for a waiter leaving (no lock), one of
// that form: a queue named after another key would be that key's own wait
// queue, and its waiters would shut out that lock's acquirers (helper-93).
func fairQueueOK(c *request, o operands, leaving bool) bool {
	queue, name := clientKey(o.queue), clientKey(o.key)
	want := "redisson_lock_queue:{" + name + "}"
	if strings.Contains(name, "{") {
		want = "redisson_lock_queue:" + name
	}
	if leaving && strings.HasPrefix(queue, "redisson_lock_queue:") || !leaving && queue == want {
		return true
	}
	if leaving {
		c.writeErr(respError("ERR RFairLock's queue (KEYS[1]) must be named redisson_lock_queue:{<lock>}"))
	} else {
		c.writeErr(respError(fmt.Sprintf("ERR RFairLock's queue (KEYS[2]) must be %s, the name Redisson derives from the lock's", want)))
	}
	return false
}

// fairAcquire runs RFairLock's lock script: nil when held, else (join: a
// lock() or tryLock with a wait, which queues) the ms to wait before trying
// again, at the latest, or (a tryLock() without one) 1.
func (s *scriptService) fairAcquire(c *request, o operands, join bool) {
	if !fairQueueOK(c, o, false) {
		return
	}
	start := time.Now()
	lease := min(o.wait, s.engine.MaxTTL()) // a place outlives its wait by the client's thread wait time
	g, err := s.engine.AcquireFair(c.ctx, o.key, o.owner, o.queue, o.ttl, lease, join)
	c.track(kindAcquire, start, g, err)
	var taken *quorum.HashTaken
	switch {
	case err == nil:
		c.writeNull()
	case errors.As(err, &taken) && join:
		c.wr.WriteInt64(max(taken.Wait.Milliseconds(), 1))
	case errors.As(err, &taken):
		c.wr.WriteInt(1)
	default:
		c.writeErr(err)
	}
}

// fairForceRelease runs RFairLock's forceUnlock: 1 when the lock existed
// (and the first waiter is woken), else 0.
func (s *scriptService) fairForceRelease(c *request, o operands) {
	if !fairQueueOK(c, o, false) {
		return
	}
	if existed, ok := s.native.forceRelease(c, "forceUnlock", o.key, "", "", ""); ok {
		if existed {
			s.wakeFirst(o.queue, o.channel, o.message)
		}
		c.wr.WriteInt(boolInt(existed))
	}
}

// fairLeave runs RFairLock's acquireFailed: the waiter leaves the queue on
// every node, and whoever is first now is woken (Redisson's own script
// wakes nobody: on one Redis the next waiter finds the lock free when its
// wait ends; by quorum it would wait out the lease of the place it left).
func (s *scriptService) fairLeave(c *request, o operands) {
	if !fairQueueOK(c, o, true) {
		return
	}
	s.engine.LeaveFair(o.queue, o.owner)
	if name, ok := strings.CutPrefix(clientKey(o.queue), "redisson_lock_queue:"); ok {
		s.wakeFirst(o.queue, "redisson_lock__channel:"+name, "0") // LockPubSub's unlock message
	}
	c.writeNull()
}

// wakeFirst tells the first waiter of fair queue queue (each node's, where
// they differ) that the lock may be its, on its own channel.
func (s *scriptService) wakeFirst(queue, channel, message string) {
	for _, w := range s.engine.QueueHeads(queue) {
		s.bus.Notify(channel+":"+w, message)
	}
}
