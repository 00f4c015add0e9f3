package proxy

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

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
var rwSpecs = func() map[string]spec {
	release := spec{kind: scriptHashRelease, key: key(1), channel: key(2), message: arg(1), owner: arg(2), rw: "read", unused: []int{3, 4}}
	readUnlock352, writeUnlock := release, release
	release.absentReleased = true
	readUnlock352.latch, readUnlock352.latchTTL = key(5), arg(4)
	writeUnlock.rw, writeUnlock.ttl, writeUnlock.ttlCmd, writeUnlock.owner, writeUnlock.unused = "write", arg(2), "pexpire", arg(3), nil
	writeUnlock352 := writeUnlock
	writeUnlock.absentReleased = true
	writeUnlock352.latch, writeUnlock352.latchTTL = key(3), arg(5)
	readUnlock324, writeUnlock324 := readUnlock352, writeUnlock352
	readUnlock324.absentReleased, writeUnlock324.absentReleased = true, true
	force := spec{kind: scriptForceUnlock, key: key(1), channel: key(2), message: arg(1), rw: "read"}
	forceWrite := force
	forceWrite.rw = "write"
	return map[string]spec{
		rwReadLock:         {kind: scriptHashAcquire, key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), rw: "read", unused: []int{2}},
		rwWriteLock:        {kind: scriptHashAcquire, key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), rw: "write"},
		rwReadUnlock323:    release,
		rwReadUnlock352:    readUnlock352,
		rwWriteUnlock323:   writeUnlock,
		rwWriteUnlock352:   writeUnlock352,
		rwReadUnlock324:    readUnlock324,
		rwWriteUnlock324:   writeUnlock324,
		rwReadRenew323:     {kind: scriptHashExtend, key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), unused: []int{2}},
		rwReadRenew352:     {kind: scriptHashExtendAll, key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), ownerPerKey: true, keyPairs: true},
		rwReadForceUnlock:  force,
		rwWriteForceUnlock: forceWrite,
		rwReadIsLocked352:  {kind: scriptReadLocked, key: key(1)},
	}
}()

// rwRelease gives up one hold of a read-write lock, answering as Redisson's
// unlock on one Redis: 1 when the lock is then free (for a write unlock,
// also when the writer's thread still reads it), 0 while it is held; the
// waiters are told only when it is free, as the script publishes.
func (s *Server) rwRelease(c *request, o operands) {
	start := time.Now()
	res, err := s.engine.ReleaseRW(c.ctx, o.key, o.owner, o.rw == "write", o.ttl, o.latch, o.latchTTL, o.absentReleased)
	s.metrics.observe(kindRelease, start, err, 0)
	switch {
	case err == nil && res == quorum.Released:
		s.bus.Notify(o.channel, o.message)
		c.wr.WriteInt(1)
	case err == nil && res == quorum.ReleasedShared && o.rw == "write":
		c.wr.WriteInt(1)
	case err == nil:
		c.wr.WriteInt(0)
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// readLocked answers Redisson 3.52's readLock().isLocked() by quorum.
func (s *Server) readLocked(c *request, o operands) {
	start := time.Now()
	yes, err := s.engine.ReadLocked(c.ctx, o.key)
	s.metrics.observe(kindRead, start, err, 0)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.wr.WriteInt(boolInt(yes))
}

// unusedKeys reports, for an EVAL or EVALSHA of a known script, which KEYS
// positions (1-based) the proxy never touches for it (spec.unused).
func unusedKeys(cmd *command, args [][]byte) func(int) bool {
	none := func(int) bool { return false }
	if len(args) < 2 || cmd.name != "eval" && cmd.name != "evalsha" {
		return none
	}
	sha := strings.ToLower(string(args[1]))
	if cmd.name == "eval" {
		sha = sha1Hex(string(args[1]))
	}
	sp := book[sha]
	if sp == nil || len(sp.unused) == 0 && !sp.keyPairs {
		return none
	}
	return func(i int) bool { return slices.Contains(sp.unused, i) || sp.keyPairs && i%2 == 0 }
}
