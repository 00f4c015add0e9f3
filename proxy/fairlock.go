package proxy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Redisson's RFairLock (issue 26): its scripts by SHA1, as Redisson 3.23.4
// and 3.52.0 send them (recorded with the real clients:
// compat/transcripts/redisson-*-fairlock*.jsonl), each with its layout. The
// lock is RLock's hash; its waiters queue in KEYS[2]
// ("redisson_lock_queue:{name}"), which the proxy keeps as a fair queue by
// quorum under that name (quorum.AcquireFair: arrival order across clients
// and replicas, each place leased). A refused lock() joins the queue and is
// told how long to wait; an unlock, a forceUnlock or a waiter giving up
// wakes the waiter now first, on its own channel ("<channel>:<owner>"), as
// the scripts publish on one Redis. The renewals are RLock's own scripts.
// KEYS[3], Redisson's timeouts of the waiters, is not used: each place's
// lease is the proxy's.
const (
	fairLock323   = "762bfafa6be221431a0b668685dd15c926483619" // lock(), tryLock(wait): KEYS[1] lock, [2] queue, [3] timeouts; ARGV[1] lease, [2] owner, [3] wait, [4] the client's clock
	fairTry323    = "aa0a28d2eb7cbeb50151315a58eb75302d8dfa40" // tryLock() without a wait: ARGV[1] lease, [2] owner, [3] the client's clock, [4] wait; nil or 1
	fairUnlock323 = "14f85250fb2a386500bf8e4b25a8e95db140ff0c" // unlock: KEYS[1], [2] queue, [3], [4] channel; ARGV[1] message, [2] lease, [3] owner, [4] clock, [5] publish command
	fairForce323  = "047c11d7fec40d0102fe9903ff1e19e9a1dec610" // forceUnlock: KEYS[1], [2] queue, [3], [4] channel; ARGV[1] message, [2] clock, [3] publish command
	fairLock352   = "8f6ed299ffd259f0539c20f89253998c0777ea75" // 3.52's lock(), tryLock(wait): 3.23's layout
	fairTry352    = "d20501c26a30adf6fb0fe9883bbbcc497e6157e2" // 3.52's tryLock(): 3.23's layout
	fairUnlock352 = "367f80bd2e300e411fb0936d9b601e5bcb3fd4b6" // 3.52's unlock: and the latch KEYS[5], its TTL ARGV[6]
	fairForce352  = "71ed11d4e4818119ac560b3d670a7f08256afc46" // 3.52's forceUnlock: 3.23's layout
	fairUnlock324 = "ca303f8587d0942f8a0021f62338626ca4dd0118" // 3.24-3.30's unlock: 3.52's layout (the latch)
	fairLock332   = "929defe0321e0a4c943b4244951d3a730b6eaabc" // 3.32-3.44's lock(), tryLock(wait): 3.23's layout
	fairLeave     = "d1ddef65ad80886b5d36e023c99930044ddd653a" // a waiter gives up (acquireFailed): KEYS[1] queue, [2] timeouts; ARGV[1] owner, [2] wait
)

// fairSpecs are the RFairLock scripts' specs.
var fairSpecs = func() map[string]spec {
	lock := spec{kind: scriptFairAcquire, key: key(1), queue: key(2), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), wait: arg(3), unused: []int{3}}
	try := lock
	try.kind, try.wait = scriptFairTryAcquire, arg(4)
	unlock := spec{kind: scriptHashRelease, key: key(1), queue: key(2), channel: key(4), message: arg(1), ttl: arg(2), ttlCmd: "pexpire",
		owner: arg(3), absentReleased: true, unused: []int{3}}
	unlock352 := unlock
	unlock352.latch, unlock352.latchTTL = key(5), arg(6)
	force := spec{kind: scriptForceUnlock, key: key(1), queue: key(2), channel: key(4), message: arg(1), unused: []int{3}}
	return map[string]spec{
		fairLock323: lock, fairLock352: lock, fairTry323: try, fairTry352: try,
		fairUnlock323: unlock, fairUnlock352: unlock352, fairForce323: force, fairForce352: force,
		fairUnlock324: unlock352, fairLock332: lock,
		fairLeave: {kind: scriptFairLeave, key: key(1), queue: key(1), owner: arg(1), unused: []int{2}},
	}
}()

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
func (s *Server) fairAcquire(c *request, o operands, join bool) {
	if !fairQueueOK(c, o, false) {
		return
	}
	start := time.Now()
	lease := min(o.wait, s.engine.MaxTTL()) // a place outlives its wait by the client's thread wait time
	g, err := s.engine.AcquireFair(c.ctx, o.key, o.owner, o.queue, o.ttl, lease, join)
	s.track(c, kindAcquire, start, g, err)
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
func (s *Server) fairForceRelease(c *request, o operands) {
	if !fairQueueOK(c, o, false) {
		return
	}
	if existed, ok := s.forceRelease(c, "forceUnlock", o.key, "", "", ""); ok {
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
func (s *Server) fairLeave(c *request, o operands) {
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
func (s *Server) wakeFirst(queue, channel, message string) {
	for _, w := range s.engine.QueueHeads(queue) {
		s.bus.Notify(channel+":"+w, message)
	}
}
