package scriptbook

import "fmt"

// Script families (issue 26): the scripts of one client object in one
// version, each with its role. A lock the proxy grants must be one the same
// client can release (and renew, and force-release, where it does): a family
// is served whole, or its acquire is refused with an error naming the object
// and version, never granted half-served. TestFamiliesServedWhole walks
// this table.

// role is what a script does for its family.
type role uint8

const (
	roleAcquire      role = iota + 1
	roleRenew             // extend, refresh, touch, re-acquire one's own
	roleRelease           // unlock by its owner
	roleForceRelease      // unlock whoever holds it
	roleRead              // the owner's TTL
	roleLease             // set a held lock's TTL (RedissonMultiLock's expire)
	roleLeave             // a waiter gives up its place (RFairLock's acquireFailed)
	roleSetup             // set a semaphore's permits
)

func (r role) String() string {
	return map[role]string{roleAcquire: "lock", roleRenew: "renew", roleRelease: "unlock",
		roleForceRelease: "forceUnlock", roleRead: "pttl", roleLease: "lease", roleLeave: "acquireFailed", roleSetup: "setPermits"}[r]
}

// member is one script of a family by SHA1.
type member struct {
	sha  string
	role role
}

// family is one client object in one version (range).
type family struct {
	object, version string
	// nativeAcquire: the acquire is SET NX PX, always served.
	nativeAcquire bool
	// renews and forceRelease: the client has these, so the family needs them.
	renews, forceRelease bool
	members              []member
	// gap, when set, says why a family that is not whole cannot be refused at
	// its acquire (it shares it with a family that is served): a known defect.
	gap string
}

func (f family) String() string { return f.object + " (" + f.version + ")" }

func m(sha string, r role) member { return member{sha, r} }

const (
	rLock      = shaRedissonLock
	rLock312   = shaRedissonLock312
	rUnlock    = shaRedissonUnlock
	rUnlock322 = shaRedissonUnlock322
	rRenew     = shaRedissonRenew
	rBatch     = shaRedissonRenewBatch
	rForce     = shaRedissonForce
	rForceOld  = shaRedissonForceOld
)

// families is every client object whose scripts the proxy knows.
var families = []family{
	{object: "redis-py Lock", version: "4-5", nativeAcquire: true, renews: true, members: []member{
		m(shaRedisPyRelease, roleRelease), m(shaRedisPyExtend, roleRenew), m(shaRedisPyReacquire, roleRenew)}},
	{object: "redsync Mutex", version: "v4", nativeAcquire: true, renews: true, members: []member{
		m(shaRedsyncDelete, roleRelease), m(shaRedsyncTouch, roleRenew), m(shaRedsyncTouchSetNX, roleRenew)}},
	{object: "bsm/redislock", version: "<0.10", renews: true, members: []member{
		m(shaBsmObtain, roleAcquire), m(shaBsmRefresh, roleRenew), m(shaBsmRelease, roleRelease), m(shaBsmPTTL, roleRead)}},
	{object: "bsm/redislock", version: "v0.10+", renews: true, members: []member{
		m("eb0c00d98f6f33b4262419a509002884540f30be", roleAcquire), m("5a22d7e8431313862816d4416b5e46dd70fc340d", roleRenew),
		m("9470c810040e272ee6c579d8d4331aaf6332a7b1", roleRelease), m("66e1084c2d842a7e8c271925aae90219fac4e129", roleRead)}},
	{object: "node-redlock", version: "5", renews: true, members: []member{
		m(shaNodeRedlockAcquire, roleAcquire), m(shaNodeRedlockExtend, roleRenew), m(shaNodeRedlockRelease, roleRelease)}},
	{object: "node-redlock", version: "4", renews: true, members: []member{
		m(shaNodeRedlock4Acquire, roleAcquire), m(shaNodeRedlock4Extend, roleRenew), m(shaNodeRedlock4Release, roleRelease)}},
	{object: "@sesamecare-oss/redlock", version: "1", renews: true, members: []member{
		m(shaSesamecareAcquire, roleAcquire), m(shaSesamecareExtend, roleRenew), m(shaSesamecareRelease, roleRelease)}},
	{object: "redis.io docs unlock (Jedis, Lettuce users)", version: "any", nativeAcquire: true, members: []member{
		m(shaDocsUnlock, roleRelease), m(shaUnlockOneLineDQ, roleRelease), m(shaUnlockOneLineSQ, roleRelease)}},
	{object: "ShedLock", version: "6.7-7.9", nativeAcquire: true, renews: true, members: []member{
		m(shaDocsUnlockNewline, roleRelease), m("67256370c2d1c87e2250898075542b1a7fa5b917", roleRenew)}},
	{object: "Spring Integration RedisLockRegistry", version: "5.4-7.1", renews: true, members: []member{
		m("175897a4e379e99e79a54937be09226f76cdcfe5", roleAcquire), m("6d2bc6d16248df19e144841297222544e3c7800a", roleAcquire),
		m("8426c8df41c64d8177dce3ecbbe9146ef3759cd2", roleAcquire),
		m("f0f9038aa2b6d6c3436c72d147573ea2a58f0ef2", roleRelease), m("356d97191f2b63031781ccc0e8e82f02e1995a90", roleRelease),
		m("7a71e9443a2a41539fb115a5a27d5a748a871aed", roleRelease), m("b2dedc0ab01c17f9f20e3e6ddb62dcb6afbed0bd", roleRelease),
		m("67aebbcba76d9674162e8906de1f669866f48e07", roleRelease), m("4d7192f70618a620282e427698f9cde890151e58", roleRelease),
		m("c1ae6c899d164de076f40ffe82eba8fb8e27af6c", roleForceRelease), m("20b5c3728736e2367b496c16390f9df56916a76f", roleForceRelease),
		m("879e0f7b8d83c3266d4e996627438c05dbda0b89", roleRenew)}},
	{object: "Redisson RLock", version: "3.10.0-3.10.5", renews: true, members: []member{
		m(shaRedissonLock310, roleAcquire), m(shaRedissonUnlock310, roleRelease), m(rRenew, roleRenew)}},
	{object: "Redisson RLock", version: "3.12.3-3.18", renews: true, forceRelease: true, members: []member{
		m(rLock312, roleAcquire), m(shaRedissonUnlock3106, roleRelease), m(rRenew, roleRenew), m(rForceOld, roleForceRelease)}},
	{object: "Redisson RLock", version: "3.19-3.21", renews: true, forceRelease: true, members: []member{
		m(rLock, roleAcquire), m(shaRedissonUnlock3106, roleRelease), m(rRenew, roleRenew), m(rForceOld, roleForceRelease)}},
	{object: "Redisson RLock", version: "3.22-3.23", renews: true, forceRelease: true, members: []member{
		m(rLock, roleAcquire), m(rUnlock322, roleRelease), m(rRenew, roleRenew), m(rForce, roleForceRelease)}},
	{object: "Redisson RLock", version: "3.24-3.43", renews: true, forceRelease: true, members: []member{
		m(rLock, roleAcquire), m(rUnlock, roleRelease), m(rRenew, roleRenew), m(rForce, roleForceRelease)}},
	{object: "Redisson RLock", version: "3.44-3.52", renews: true, forceRelease: true, members: []member{
		m(rLock, roleAcquire), m(rUnlock, roleRelease), m(rBatch, roleRenew), m(rForce, roleForceRelease)}},
	{object: "Redisson RFencedLock", version: "3.23", renews: true, forceRelease: true, members: []member{
		m(shaRedissonFencedLock, roleAcquire), m(shaRedissonFencedTry, roleAcquire),
		m(rUnlock322, roleRelease), m(rRenew, roleRenew), m(rForce, roleForceRelease)}},
	// RSpinLock locks with RLock 3.12.3-3.18's text and renews with RLock's
	// watchdog scripts; its unlock and forceUnlock are its own.
	{object: "Redisson RSpinLock", version: "3.23", renews: true, forceRelease: true, members: []member{
		m(rLock312, roleAcquire), m(redissonSpinUnlock323, roleRelease), m(rRenew, roleRenew), m(redissonSpinForceUnlock, roleForceRelease)}},
	{object: "Redisson RSpinLock", version: "3.52", renews: true, forceRelease: true, members: []member{
		m(rLock312, roleAcquire), m(redissonSpinUnlock352, roleRelease), m(rBatch, roleRenew), m(redissonSpinForceUnlock, roleForceRelease)}},
	// RReadWriteLock (proxy/rwlock.go): the writer renews with RLock's scripts.
	{object: "Redisson RReadWriteLock", version: "3.23", renews: true, forceRelease: true, members: []member{
		m(rwReadLock, roleAcquire), m(rwWriteLock, roleAcquire), m(rwReadUnlock323, roleRelease), m(rwWriteUnlock323, roleRelease),
		m(rwReadRenew323, roleRenew), m(rRenew, roleRenew), m(rwReadForceUnlock, roleForceRelease), m(rwWriteForceUnlock, roleForceRelease)}},
	{object: "Redisson RReadWriteLock", version: "3.52", renews: true, forceRelease: true, members: []member{
		m(rwReadLock, roleAcquire), m(rwWriteLock, roleAcquire), m(rwReadUnlock352, roleRelease), m(rwWriteUnlock352, roleRelease),
		m(rwReadRenew352, roleRenew), m(rBatch, roleRenew), m(rwReadForceUnlock, roleForceRelease), m(rwWriteForceUnlock, roleForceRelease),
		m(rwReadIsLocked352, roleRead)}},
	{object: "Redisson RReadWriteLock", version: "3.24-3.43", renews: true, forceRelease: true, members: []member{
		m(rwReadLock, roleAcquire), m(rwWriteLock, roleAcquire), m(rwReadUnlock324, roleRelease), m(rwWriteUnlock324, roleRelease),
		m(rwReadRenew323, roleRenew), m(rRenew, roleRenew), m(rwReadForceUnlock, roleForceRelease), m(rwWriteForceUnlock, roleForceRelease),
		m(rwReadIsLocked352, roleRead)}},
	// RFairLock (proxy/fairlock.go): RLock's renewals.
	{object: "Redisson RFairLock", version: "3.23", renews: true, forceRelease: true, members: []member{
		m(fairLock323, roleAcquire), m(fairTry323, roleAcquire), m(fairUnlock323, roleRelease), m(rRenew, roleRenew),
		m(fairForce323, roleForceRelease), m(fairLeave, roleLeave)}},
	{object: "Redisson RFairLock", version: "3.24-3.30", renews: true, forceRelease: true, members: []member{
		m(fairLock323, roleAcquire), m(fairTry323, roleAcquire), m(fairUnlock324, roleRelease), m(rRenew, roleRenew),
		m(fairForce323, roleForceRelease), m(fairLeave, roleLeave)}},
	{object: "Redisson RFairLock", version: "3.32-3.43", renews: true, forceRelease: true, members: []member{
		m(fairLock332, roleAcquire), m(fairTry352, roleAcquire), m(fairUnlock352, roleRelease), m(rRenew, roleRenew),
		m(fairForce352, roleForceRelease), m(fairLeave, roleLeave)}},
	{object: "Redisson RFairLock", version: "3.44", renews: true, forceRelease: true, members: []member{
		m(fairLock332, roleAcquire), m(fairTry352, roleAcquire), m(fairUnlock352, roleRelease), m(rBatch, roleRenew),
		m(fairForce352, roleForceRelease), m(fairLeave, roleLeave)}},
	{object: "Redisson RFairLock", version: "3.52", renews: true, forceRelease: true, members: []member{
		m(fairLock352, roleAcquire), m(fairTry352, roleAcquire), m(fairUnlock352, roleRelease), m(rBatch, roleRenew),
		m(fairForce352, roleForceRelease), m(fairLeave, roleLeave)}},
	// RPermitExpirableSemaphore (proxy/permits.go): each permit leased, so there is
	// nothing to renew or force; its setPermits and addPermits answer a
	// refusal that names trySetPermits.
	{object: "Redisson RPermitExpirableSemaphore", version: "3.23", members: []member{
		m(permitAcquireSHA, roleAcquire), m(permitReleaseSHA, roleRelease), m(permitReleaseAnySHA, roleRelease),
		m(permitLeaseSHA, roleRenew), m(permitAvailableSHA, roleRead), m(permitTotalSHA, roleRead), m(permitAcquiredSHA, roleRead),
		m(permitSetSHA, roleSetup), m(permitTrySetSHA, roleSetup), m(permitAddSHA, roleSetup)}},
	{object: "Redisson RPermitExpirableSemaphore", version: "3.52", members: []member{
		m(permitAcquireSHA, roleAcquire), m(permitReleaseSHA, roleRelease), m(permitReleaseAllSHA, roleRelease),
		m(permitLeaseSHA, roleRenew), m(permitAvailableSHA, roleRead), m(permitTotalSHA, roleRead), m(permitAcquiredSHA, roleRead),
		m(permitLeaseLeftSHA, roleRead), m(permitSetSHA, roleSetup), m(permitTrySetSHA, roleSetup), m(permitAddSHA, roleSetup)}},
	// Objects of Redisson 3.23 and 3.52 that the proxy does not serve: their
	// scripts that take, give or set permits and counts are refused naming
	// them. The latch's SHA1s: 3.52's as its client sent them, 3.23.4's
	// computed from its source text (the scripts as RedissonCountDownLatch
	// concatenates them), each matching the prefix issue 26 recorded from
	// the client; its first commands are its set-up (trySetCount) or, for
	// one set up elsewhere, countDown. RSemaphore's, the same in both
	// versions, computed from its source text: tryAcquire, release,
	// drainPermits, addPermits and 3.52's trySetPermits with a time to live
	// (its trySetPermits is RPermitExpirableSemaphore's, served: it only sets
	// a number, and RSemaphore's next script is refused).
	{object: "Redisson RSemaphore", version: "3.23-3.52", members: []member{m("c7dc9d189c1715465a31a06ddbc008585e0c20be", roleAcquire),
		m("ae27582488dd01f4e238cc0733a12146d410eb44", roleAcquire), m("c87766d572855e9461c4ecd453db5d1cbab6119e", roleAcquire),
		m("98238d408c6755085344670d3a2ddaa55cf177a9", roleAcquire), m("38bf99884eb94708a40a9aabacb15b4c5f16e804", roleAcquire)}},
	{object: "Redisson RCountDownLatch", version: "3.23-3.52", members: []member{m("2a52d54a6f35bc8af5e84a2930b2ca1aa2a15892", roleAcquire)}},
	{object: "Redisson RCountDownLatch", version: "3.23", members: []member{m("38060fab26b0e7c5982a5cfd7ad542e44d3da19b", roleAcquire)}},
	// RedissonMultiLock with a lease takes its members with RLock's own lock
	// script, then sets each one's TTL with RedissonExpirable's generic
	// PEXPIRE script (3fd750e0), which names no owner.
	{object: "Redisson RedissonMultiLock with a lease", version: "3.52", renews: true, forceRelease: true, members: []member{
		m(rLock, roleAcquire), m(redissonMultiLease, roleLease), m(rUnlock, roleRelease),
		m(rBatch, roleRenew), m(rForce, roleForceRelease)}},
}

// missing is the first thing family f lacks to be served whole: a role it
// needs and has no member for, or a member the proxy does not serve.
func (f family) missing(served func(sha string) bool) string {
	has := map[role]bool{}
	for _, mb := range f.members {
		has[mb.role] = true
		if !served(mb.sha) {
			return fmt.Sprintf("its %s script %.8s… is not recognised", mb.role, mb.sha)
		}
	}
	need := []role{roleRelease}
	if f.renews {
		need = append(need, roleRenew)
	}
	if f.forceRelease {
		need = append(need, roleForceRelease)
	}
	for _, r := range need {
		if !has[r] {
			return fmt.Sprintf("it has no %s script", r)
		}
	}
	return ""
}

// refusals are the acquire scripts of families not served whole, by SHA1,
// with the error reply their calls get; a family with a gap is left out.
func refusals(fams []family, served func(sha string) bool) map[string]string {
	out := map[string]string{}
	for _, f := range fams {
		why := f.missing(served)
		if why == "" || f.gap != "" {
			continue
		}
		for _, mb := range f.members {
			if mb.role == roleAcquire && out[mb.sha] == "" {
				out[mb.sha] = fmt.Sprintf("ERR redlock-proxy does not serve %s: %s; use RLock", f, why)
			}
		}
	}
	return out
}

func inBook(sha string) bool { return Book[sha] != nil }

// RefusedAcquires is refusals of the table, fixed at start.
var RefusedAcquires = refusals(families, inBook)
