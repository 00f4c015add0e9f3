package scriptbook

// Redisson's RReadWriteLock (issue 26): its scripts by SHA1, as Redisson
// 3.23.4 and 3.52.0 send them (recorded with the real clients:
// compat/transcripts/redisson-*-rwlock.jsonl), each with its layout. The
// lock is a hash with a field mode ("read" or "write") beside its holders;
// a writer is "<uuid>:<thread>:write", its thread's reader "<uuid>:<thread>".
// Each runs as quorum rounds on the engine's read-write locks
// (quorum.AcquireRW: shared readers, one writer, each holder's window its
// own), and answers as the script would on one Redis. The writer's renewal
// is RLock's own script (8e19a1dd, 3.52's batch 6a3d3157): a node tells a
// read-write lock by its hash.
const (
	rwReadLock         = "95553a6ff11176c18e71344e89d116b06fd6f753" // readLock() lock/tryLock: KEYS[1], [2] its timeouts' prefix; ARGV[1] lease, [2] owner, [3] its writer's name
	rwWriteLock        = "6306ba3bf1f563b284bed52d305fce615c6664d9" // writeLock() lock/tryLock: KEYS[1]; ARGV[1] lease, [2] owner
	rwReadUnlock323    = "92a54c31a4dc3b46f81e24a6dd5bb7d677c6f882" // 3.23 readLock().unlock: KEYS[1], [2] channel, [3], [4] timeouts; ARGV[1] message, [2] owner; a free lock answers 1
	rwReadUnlock352    = "6e1b10e11ac0a3ed8e902562ecd32ce01b553039" // 3.52: and the latch KEYS[5], its TTL ARGV[4]; a free lock answers nil
	rwWriteUnlock323   = "319a1cdf1b56c767a0a9adf2224250bf811f110c" // 3.23 writeLock().unlock: KEYS[1], [2] channel; ARGV[1] message, [2] lease, [3] owner; a free lock answers 1
	rwWriteUnlock352   = "21f5fb0f8ddfa9be5c3e0c9757c128796add75c6" // 3.52: and the latch KEYS[3], its TTL ARGV[5]; a free lock answers nil
	rwReadUnlock324    = "5947c0fee6ca25ae094ec1b3e7a2559a9273d29f" // 3.24-3.43: 3.52's layout (the latch); a free lock answers 1
	rwWriteUnlock324   = "d29c5559782035515d32e926762830b3304b49be" // 3.24-3.43: 3.52's layout (the latch); a free lock answers 1
	rwReadRenew323     = "6563941ff57e01b8cf61e86907b80686438a2f74" // 3.23 reader's watchdog: KEYS[1], [2] timeouts; ARGV[1] lease, [2] owner; 1/0
	rwReadRenew352     = "1affef780a01e1406cb1968c62918f618d10d6a3" // 3.52 readers' watchdog: KEYS pairs (lock, timeouts); ARGV[1] lease, ARGV[1+i] the i-th lock's owner; array of 1/0
	rwReadForceUnlock  = "27dbe744e95c1d854a7f556cc6817030de2d0d01" // readLock().forceUnlock: KEYS[1], [2] channel; ARGV[1] message; 1 when it was read
	rwWriteForceUnlock = "2e2cb2a3b13e2e80e4236ef6a25beaf365dba608" // writeLock().forceUnlock: 1 when it was written
	rwReadIsLocked352  = "8ad44f1ba014938c20da38206b6d496c85ec1aed" // 3.52 readLock().isLocked: KEYS[1]; 1 when read, or written by a thread that reads it too
)

// rwSpecs are the RReadWriteLock scripts' specs.
var rwSpecs = func() map[string]Spec {
	release := Spec{Kind: HashRelease, Key: Key(1), Channel: Key(2), Message: Arg(1), Owner: Arg(2), RW: "read", Unused: []int{3, 4}}
	readUnlock352, writeUnlock := release, release
	release.AbsentReleased = true
	readUnlock352.Latch, readUnlock352.LatchTTL = Key(5), Arg(4)
	writeUnlock.RW, writeUnlock.TTL, writeUnlock.TTLCmd, writeUnlock.Owner, writeUnlock.Unused = "write", Arg(2), "pexpire", Arg(3), nil
	writeUnlock352 := writeUnlock
	writeUnlock.AbsentReleased = true
	writeUnlock352.Latch, writeUnlock352.LatchTTL = Key(3), Arg(5)
	readUnlock324, writeUnlock324 := readUnlock352, writeUnlock352
	readUnlock324.AbsentReleased, writeUnlock324.AbsentReleased = true, true
	force := Spec{Kind: ForceUnlock, Key: Key(1), Channel: Key(2), Message: Arg(1), RW: "read"}
	forceWrite := force
	forceWrite.RW = "write"
	return map[string]Spec{
		rwReadLock:         {Kind: HashAcquire, Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), RW: "read", Unused: []int{2}},
		rwWriteLock:        {Kind: HashAcquire, Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), RW: "write"},
		rwReadUnlock323:    release,
		rwReadUnlock352:    readUnlock352,
		rwWriteUnlock323:   writeUnlock,
		rwWriteUnlock352:   writeUnlock352,
		rwReadUnlock324:    readUnlock324,
		rwWriteUnlock324:   writeUnlock324,
		rwReadRenew323:     {Kind: HashExtend, Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), Unused: []int{2}},
		rwReadRenew352:     {Kind: HashExtendAll, Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), OwnerPerKey: true, KeyPairs: true},
		rwReadForceUnlock:  force,
		rwWriteForceUnlock: forceWrite,
		rwReadIsLocked352:  {Kind: ReadLocked, Key: Key(1)},
	}
}()
