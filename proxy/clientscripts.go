package proxy

import _ "embed"

// Exact script texts of client libraries, byte for byte as they send them
// (their SHA1s are in CLIENTS.md).
var (
	//go:embed clientscripts/redispy_release.lua
	redisPyRelease string // c3f8721c...
	//go:embed clientscripts/redispy_extend.lua
	redisPyExtend string // a4e87838...
	//go:embed clientscripts/redispy_reacquire.lua
	redisPyReacquire string // 1cac5148...
	//go:embed clientscripts/redsync_delete.lua
	redsyncDelete string // e950836e...
	//go:embed clientscripts/redsync_touch.lua
	redsyncTouch string // d75bb8b5...
	//go:embed clientscripts/redsync_touch_setnx.lua
	redsyncTouchSetNX string // b6b55c43...
	//go:embed clientscripts/docs_unlock.lua
	docsUnlock string // 647c65a4... (redis.io docs, Jedis users)
	//go:embed clientscripts/docs_unlock_newline.lua
	docsUnlockNewline string // 194f3902... (ShedLock safeUpdate: the docs script with a trailing newline)
	//go:embed clientscripts/unlock_oneline_dq.lua
	unlockOneLineDQ string // b70c2384... (one line, double quotes)
	//go:embed clientscripts/unlock_oneline_sq.lua
	unlockOneLineSQ string // e9f69f2b... (one line, single quotes)
	//go:embed clientscripts/bsm_release.lua
	bsmRelease string // cf0e94b2... (bsm/redislock)
	//go:embed clientscripts/bsm_obtain.lua
	bsmObtain string // 80a1b5f2...
	//go:embed clientscripts/bsm_refresh.lua
	bsmRefresh string // a7aba3bc...
	//go:embed clientscripts/bsm_pttl.lua
	bsmPTTL string // 6484da7d...
	//go:embed clientscripts/noderedlock5_acquire.lua
	nodeRedlockAcquire string // 96da70f7...
	//go:embed clientscripts/noderedlock5_extend.lua
	nodeRedlockExtend string // aed6f382...
	//go:embed clientscripts/noderedlock5_release.lua
	nodeRedlockRelease string // e4612211...
	//go:embed clientscripts/noderedlock4_acquire.lua
	nodeRedlock4Acquire string // e5a322e2...
	//go:embed clientscripts/noderedlock4_extend.lua
	nodeRedlock4Extend string // ce46f809...
	//go:embed clientscripts/noderedlock4_release.lua
	nodeRedlock4Release string // 0f0f23b9...
	//go:embed clientscripts/sesamecare_acquire.lua
	sesamecareAcquire string // 1b77b94a...
	//go:embed clientscripts/sesamecare_extend.lua
	sesamecareExtend string // 820e9778...
	//go:embed clientscripts/sesamecare_release.lua
	sesamecareRelease string // df51f683...

	// Redisson's texts are its Java string literals joined, as it sends them.
	//go:embed clientscripts/redisson_lock.lua
	redissonLock string // 149c5a8b... (3.19+)
	//go:embed clientscripts/redisson_lock_3.12.lua
	redissonLock312 string // dad0f8d6... (3.12.3-3.18)
	//go:embed clientscripts/redisson_lock_3.10.lua
	redissonLock310 string // 9401052d... (3.10.0-3.10.5)
	//go:embed clientscripts/redisson_unlock.lua
	redissonUnlock string // 68664592... (3.24+)
	//go:embed clientscripts/redisson_unlock_3.22.lua
	redissonUnlock322 string // 778cea8a... (3.22-3.23: ARGV[4] the publish command, no latch)
	//go:embed clientscripts/redisson_unlock_3.10.6.lua
	redissonUnlock3106 string // 3ffe249c... (3.10.6-3.21)
	//go:embed clientscripts/redisson_unlock_3.10.lua
	redissonUnlock310 string // 93cfc048... (3.10.0-3.10.5)
	//go:embed clientscripts/redisson_renew.lua
	redissonRenew string // 8e19a1dd... (up to 3.43)
	//go:embed clientscripts/redisson_renew_batch.lua
	redissonRenewBatch string // 6a3d3157... (3.44+)
	//go:embed clientscripts/redisson_forceunlock.lua
	redissonForceUnlock string // 605e3382... (3.22+)
	//go:embed clientscripts/redisson_forceunlock_3.10.6.lua
	redissonForceUnlockOld string // 7e9c80b3... (3.10.6-3.21)
	//go:embed clientscripts/redisson_fenced_lock.lua
	redissonFencedLock string // 46b5551b...
	//go:embed clientscripts/redisson_fenced_trylock.lua
	redissonFencedTryLock string // 49babb5a... (seen on the wire from Redisson 3.23.4)
)

// Scripts known by SHA1 only: an EVAL of them is recognised when its text
// hashes the same; EVALSHA works on a fresh replica either way. Each SHA1
// and argument layout was checked against the client's source text, in the
// versions named (issue 12); the texts themselves are not kept here.
var knownSHAsOnly = map[string]scriptKind{
	redissonMultiLease:                         scriptHashLeaseAll,           // Redisson 3.52 RedissonMultiLock's lease (RedissonExpirable's PEXPIRE of every KEY)
	"175897a4e379e99e79a54937be09226f76cdcfe5": scriptSpringObtain,           // Spring Integration RedisLockRegistry 6.1.0-7.1.x
	"6d2bc6d16248df19e144841297222544e3c7800a": scriptSpringObtain,           // Spring 5.5.13-6.0.x
	"8426c8df41c64d8177dce3ecbbe9146ef3759cd2": scriptSpringObtain,           // Spring 5.4.0-5.5.12
	"f0f9038aa2b6d6c3436c72d147573ea2a58f0ef2": scriptSpringRelease,          // Spring 6.0.7-7.1.x spin lock unlock (UNLINK)
	"356d97191f2b63031781ccc0e8e82f02e1995a90": scriptSpringRelease,          // Spring 6.0.7-6.5.x spin lock unlock (DEL, where UNLINK is missing)
	"7a71e9443a2a41539fb115a5a27d5a748a871aed": scriptSpringReleaseNotify,    // Spring 6.0.7-7.1.x pub/sub lock unlock (UNLINK)
	"b2dedc0ab01c17f9f20e3e6ddb62dcb6afbed0bd": scriptSpringReleaseNotify,    // Spring 6.0.7-6.5.x pub/sub lock unlock (DEL)
	"67aebbcba76d9674162e8906de1f669866f48e07": scriptSpringReleaseNotifyKey, // Spring 6.4.8-6.5.3 pub/sub lock unlock (UNLINK), channel in KEYS[2]
	"4d7192f70618a620282e427698f9cde890151e58": scriptSpringReleaseNotifyKey, // Spring 6.4.8-6.5.6 pub/sub lock unlock (DEL), channel in KEYS[2]
	"c1ae6c899d164de076f40ffe82eba8fb8e27af6c": scriptSpringDeleteNotify,     // Spring 5.5.7-6.1.2 pub/sub lock unlock (UNLINK)
	"20b5c3728736e2367b496c16390f9df56916a76f": scriptSpringDeleteNotify,     // Spring 5.5.7-6.1.2 pub/sub lock unlock (DEL)
	"879e0f7b8d83c3266d4e996627438c05dbda0b89": scriptSpringRenew,            // Spring 6.4.0-7.1.x renew
	"67256370c2d1c87e2250898075542b1a7fa5b917": scriptExtend,                 // ShedLock 6.7.0-7.9.0 update (compare-and-PEXPIRE, safeUpdate)
	"eb0c00d98f6f33b4262419a509002884540f30be": scriptBsmObtain,              // bsm/redislock v0.10.0+ obtain (multi-key; ARGV value, token length, ms)
	"5a22d7e8431313862816d4416b5e46dd70fc340d": scriptBsmRefresh,             // bsm/redislock v0.10.0+ refresh (ARGV value, ms)
	"9470c810040e272ee6c579d8d4331aaf6332a7b1": scriptBsmRelease,             // bsm/redislock v0.10.0+ release (ARGV value)
	"66e1084c2d842a7e8c271925aae90219fac4e129": scriptBsmPTTL,                // bsm/redislock v0.10.0+ pttl (ARGV value)
	redissonSpinUnlock323:                      scriptHashRelease,            // Redisson RSpinLock 3.23 unlock: no channel, no latch; 1, 0 or nil
	redissonSpinUnlock352:                      scriptHashRelease,            // Redisson RSpinLock 3.52 unlock: latch in KEYS[2], its TTL in ARGV[3]; no channel
	redissonSpinForceUnlock:                    scriptForceUnlock,            // Redisson RSpinLock forceUnlock (3.23, 3.52): DEL KEYS[1], 1/0, no channel
}

// RSpinLock's scripts (issue 26), checked against Redisson 3.23.4's and
// 3.52.0's source; its lock() sends RLock 3.12.3-3.18's lock text.
const (
	redissonSpinUnlock323   = "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946"
	redissonSpinUnlock352   = "73ac2729af29ea9a975f95e8097f7ee9a74cce3d"
	redissonSpinForceUnlock = "51b433c3cc9a6ca991b3aefec63d23490c246318"
	redissonMultiLease      = "3fd750e0b43af99dbd223e5523718f18cded3664"
)

// knownTexts are exact script texts seen from real clients (CLIENTS.md).
// Their SHA1s are known before any client loads them, so EVALSHA works on a
// fresh replica without a NOSCRIPT round trip.
var knownTexts = map[string]scriptKind{
	redisPyRelease:         scriptRelease,
	redisPyExtend:          scriptExtendPy,
	redisPyReacquire:       scriptExtend,
	redsyncDelete:          scriptReleaseMissing,
	redsyncTouch:           scriptExtend,
	redsyncTouchSetNX:      scriptExtendOrAcquire,
	bsmObtain:              scriptObtain,
	bsmRefresh:             scriptExtend,
	bsmPTTL:                scriptOwnerPTTL,
	nodeRedlockAcquire:     scriptAcquireAll,
	nodeRedlockExtend:      scriptExtendAll,
	nodeRedlockRelease:     scriptReleaseAll,
	nodeRedlock4Acquire:    scriptAcquireAll,
	nodeRedlock4Extend:     scriptExtendAll,
	nodeRedlock4Release:    scriptReleaseAll,
	sesamecareAcquire:      scriptAcquireAll,
	sesamecareExtend:       scriptExtendAll,
	sesamecareRelease:      scriptReleaseAll,
	redissonLock:           scriptHashAcquire,
	redissonLock312:        scriptHashAcquire,
	redissonLock310:        scriptHashAcquire,
	redissonUnlock:         scriptHashRelease,
	redissonUnlock322:      scriptHashRelease,
	redissonUnlock3106:     scriptHashRelease,
	redissonUnlock310:      scriptHashRelease,
	redissonRenew:          scriptHashExtend,
	redissonRenewBatch:     scriptHashExtendAll,
	redissonForceUnlock:    scriptForceUnlock,
	redissonForceUnlockOld: scriptForceUnlock,
	redissonFencedLock:     scriptFencedAcquire,
	redissonFencedTryLock:  scriptFencedTryAcquire,
	docsUnlock:             scriptRelease,
	docsUnlockNewline:      scriptRelease,
	unlockOneLineDQ:        scriptRelease,
	unlockOneLineSQ:        scriptRelease,
	bsmRelease:             scriptRelease,
}

// canonicalForms maps the normalised text of every accepted shape of the
// canonical compare-and-delete and compare-and-PEXPIRE to its meaning.
