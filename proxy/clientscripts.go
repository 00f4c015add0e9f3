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
