package scriptbook

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
var fairSpecs = func() map[string]Spec {
	lock := Spec{Kind: FairAcquire, Key: Key(1), Queue: Key(2), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), Wait: Arg(3), Unused: []int{3}}
	try := lock
	try.Kind, try.Wait = FairTryAcquire, Arg(4)
	unlock := Spec{Kind: HashRelease, Key: Key(1), Queue: Key(2), Channel: Key(4), Message: Arg(1), TTL: Arg(2), TTLCmd: "pexpire",
		Owner: Arg(3), AbsentReleased: true, Unused: []int{3}}
	unlock352 := unlock
	unlock352.Latch, unlock352.LatchTTL = Key(5), Arg(6)
	force := Spec{Kind: ForceUnlock, Key: Key(1), Queue: Key(2), Channel: Key(4), Message: Arg(1), Unused: []int{3}}
	return map[string]Spec{
		fairLock323: lock, fairLock352: lock, fairTry323: try, fairTry352: try,
		fairUnlock323: unlock, fairUnlock352: unlock352, fairForce323: force, fairForce352: force,
		fairUnlock324: unlock352, fairLock332: lock,
		fairLeave: {Kind: FairLeave, Key: Key(1), Queue: Key(1), Owner: Arg(1), Unused: []int{2}},
	}
}()
