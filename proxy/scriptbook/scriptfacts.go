package scriptbook

// Facts about the scripts real clients send, never their texts: the product
// holds only code this project wrote. A client's script is known by the
// SHA1 of its exact text (what EVALSHA names and an EVAL's text hashes to)
// and by the SHA1 of its normalised text (normalizeScript), which a copy
// differing only in spacing, comments, ';' or the quoting and case of its
// string literals shares. Where a script's text is recorded, the
// transcript named in seen carries it (compat/transcripts, cmd/wirerec):
// TestScriptFactsRecorded checks every such row against it. Rows seen
// "source" are of clients that cannot be built here (no Maven; Redisson
// before 3.22): their SHA1 and layout were taken from the client's source
// text for the versions named, and e2e tests send them by EVALSHA.
type scriptFact struct {
	sha      string // SHA1 of the text as the client sends it
	norm     string // SHA1 of its normalised text; "" where only the SHA1 was taken
	kind     Kind   // its meaning and layout (layouts; versionSpecs for a version's own)
	client   string // library and object
	versions string
	seen     string // the transcript that carries it, or "source"
}

// The SHA1s the families table and versionSpecs name.
const (
	shaRedisPyRelease      = "c3f8721cbb97f72bc19e972846bd7aaf91901658"
	shaRedisPyExtend       = "a4e8783852e6b949f9ef3a97212805108459a890"
	shaRedisPyReacquire    = "1cac51482acf5858da00f6d685d68f886cd6b6b2"
	shaRedsyncDelete       = "e950836ed1e694540c503ef9972b8de518044d3b"
	shaRedsyncTouch        = "d75bb8b5bd13532ddedd17762e772346e39b321e"
	shaRedsyncTouchSetNX   = "b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79"
	shaDocsUnlock          = "647c65a442733a1aa440f99908d249d13b4d6c4a"
	shaDocsUnlockNewline   = "194f3902b2dd08557818d09fc2e7682d91480e53"
	shaUnlockOneLineDQ     = "b70c2384248f88e6b75b9f89241a180f856ad852"
	shaUnlockOneLineSQ     = "e9f69f2beb755be68b5e456ee2ce9aadfbc4ebf4"
	shaBsmRelease          = "cf0e94b2e9ffc7e04395cf88f7583fc309985910"
	shaBsmObtain           = "80a1b5f2cfccec3b7119ba7721d2127682b691a7"
	shaBsmRefresh          = "a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf"
	shaBsmPTTL             = "6484da7d58920897fdc22b7f9afd1a3d47524ea8"
	shaNodeRedlockAcquire  = "96da70f7716f27d278a5218544df37fd8b0a5e4c"
	shaNodeRedlockExtend   = "aed6f382e410db8ba7926d4e5e9aab410bf2a78a"
	shaNodeRedlockRelease  = "e4612211c9f8f51c257e26e056b0a654b3187242"
	shaNodeRedlock4Acquire = "e5a322e2634ef59a516e8ea150cb085afafee684"
	shaNodeRedlock4Extend  = "ce46f80993d5dac20dd066eb301a4e37994bdbed"
	shaNodeRedlock4Release = "0f0f23b9048b36752b5be114f357ba083449f908"
	shaSesamecareAcquire   = "1b77b94aa78451d55dfa97e18819bfbfc596cb5b"
	shaSesamecareExtend    = "820e9778d2b6733e9ed771e4be90ae73a95a6f3b"
	shaSesamecareRelease   = "df51f6837dcfe303d334e6abea9aeae192bab216"
	shaRedissonLock        = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
	shaRedissonLock312     = "dad0f8d619e548e04f21fb48d50be5034df3adae"
	shaRedissonLock310     = "9401052d872adfd0179ef8c8e8c028512707629a"
	shaRedissonUnlock      = "6866459238a13a701d42f4971f12d9f3a50e2442"
	shaRedissonUnlock322   = "778cea8aada230ae060b432fc333adaec85f2f4c"
	shaRedissonUnlock3106  = "3ffe249c16dee540ac8ab32e39bd408626b9aff7"
	shaRedissonUnlock310   = "93cfc048f82624d1670a310aa0ad58918c0824a5"
	shaRedissonRenew       = "8e19a1ddbdee9138df9f32a480c57addab4353d1"
	shaRedissonRenewBatch  = "6a3d31570dc6f4b0bd32bcdc8e75667747c6f635"
	shaRedissonForce       = "605e338249a7a1d40df83b04f7658354f883b41b"
	shaRedissonForceOld    = "7e9c80b3d786b95d5d4aaf8fd73adb9775fa6fb1"
	shaRedissonFencedLock  = "46b5551ba403d6152a7a6eca122e08728d6c8c66"
	shaRedissonFencedTry   = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"

	// RSpinLock's own (issue 26); its lock() sends RLock 3.12.3-3.18's text.
	redissonSpinUnlock323   = "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946"
	redissonSpinUnlock352   = "73ac2729af29ea9a975f95e8097f7ee9a74cce3d"
	redissonSpinForceUnlock = "51b433c3cc9a6ca991b3aefec63d23490c246318"
	redissonMultiLease      = "3fd750e0b43af99dbd223e5523718f18cded3664"
)

// normUnlock is the normalised canonical compare-and-delete, which several
// clients' texts share.
const normUnlock = "278b7fc39f087c6276c7b7c08962022c4fe73ba6"

// scriptFacts is every client script the proxy knows by SHA1 (beside them,
// it recognises hand-typed forms of the canonical unlock and extend:
// canonicalForms).
var scriptFacts = []scriptFact{
	{shaRedisPyRelease, "16d4f25a8b1272dc33002e333ca708ee3f94da4e", Release, "redis-py Lock", "4-5", "redis-py-4.3.4"},
	{shaRedisPyExtend, "bce326b8a0b21cc21af307b604335bbdd4e6ad86", ExtendPy, "redis-py Lock", "4-5", "redis-py-4.3.4"},
	{shaRedisPyReacquire, "b57b48d5536ae982a91ca9929e89a43a617db101", Extend, "redis-py Lock", "4-5", "redis-py-4.3.4"},
	{shaRedsyncDelete, "d40d763d8f1fdb770873ffdbdc1cc2112866366a", ReleaseMissing, "redsync Mutex", "v4", "go-redsync-4.18.1"},
	{shaRedsyncTouch, "43e9817a622cba86ea5a7b09b0c27646e33f4699", Extend, "redsync Mutex", "v4", "go-redsync-4.18.1"},
	{shaRedsyncTouchSetNX, "63719198579dd67df3c84e5c3e12b4b0edf8cee8", ExtendOrAcquire, "redsync Mutex (WithSetNXOnExtend)", "v4", "go-redsync-4.18.1"},
	{shaDocsUnlock, normUnlock, Release, "redis.io docs unlock (Jedis users)", "any", "jedis-5.1.5"},
	{shaDocsUnlockNewline, normUnlock, Release, "ShedLock safeUpdate (the docs unlock and a newline)", "6.7-7.9", "source"},
	{shaUnlockOneLineDQ, normUnlock, Release, "the docs unlock on one line, double quotes (rueidis, node users)", "any", "go-rueidis-1.0.79"},
	{shaUnlockOneLineSQ, normUnlock, Release, "the docs unlock on one line, single quotes", "any", "source"},
	{shaBsmRelease, normUnlock, Release, "bsm/redislock", "<0.10", "go-bsm-redislock-0.9.4"},
	{shaBsmObtain, "c13e317265e506ef73902a8cad4608c6d0590685", Obtain, "bsm/redislock", "<0.10", "go-bsm-redislock-0.9.4"},
	{shaBsmRefresh, "43e9817a622cba86ea5a7b09b0c27646e33f4699", Extend, "bsm/redislock", "<0.10", "go-bsm-redislock-0.9.4"},
	{shaBsmPTTL, "2a7eeb58bfd3bfd5e34ac2be357d77d7a0039f6a", OwnerPTTL, "bsm/redislock", "<0.10", "go-bsm-redislock-0.9.4"},
	{shaNodeRedlockAcquire, "efd90cc1d10d9161bc93896108742c697ce29faf", AcquireAll, "node-redlock", "5", "node-ioredis5-redlock5"},
	{shaNodeRedlockExtend, "40cb6828065d3430c3033e27c7ec72abe4d076f6", ExtendAll, "node-redlock", "5", "node-ioredis5-redlock5"},
	{shaNodeRedlockRelease, "872463717b9d8763339c3b80e81ba68c1dbb28c2", ReleaseAll, "node-redlock", "5", "node-ioredis5-redlock5"},
	{shaNodeRedlock4Acquire, "efd90cc1d10d9161bc93896108742c697ce29faf", AcquireAll, "node-redlock", "4", "node-redlock-others"},
	{shaNodeRedlock4Extend, "40cb6828065d3430c3033e27c7ec72abe4d076f6", ExtendAll, "node-redlock", "4", "node-redlock-others"},
	{shaNodeRedlock4Release, "872463717b9d8763339c3b80e81ba68c1dbb28c2", ReleaseAll, "node-redlock", "4", "node-redlock-others"},
	{shaSesamecareAcquire, "33105ca68ad6aee7d68c8aa0d7528352aa98f255", AcquireAll, "@sesamecare-oss/redlock (SELECT ARGV[1] first)", "1", "node-redlock-others"},
	{shaSesamecareExtend, "83ae867f0d18f8e9d61a596106ffa93f26ef0bc1", ExtendAll, "@sesamecare-oss/redlock", "1", "node-redlock-others"},
	{shaSesamecareRelease, "a2bd082eb5b850c50e40c345c53c6e3fa7a94022", ReleaseAll, "@sesamecare-oss/redlock", "1", "node-redlock-others"},
	{shaRedissonLock, "768f500d461721e3c7d2b4d9c02011c9e3f920c2", HashAcquire, "Redisson RLock lock", "3.19+", "redisson-3.52.0-rlock"},
	{shaRedissonLock312, "da8a82c267e63ebd0715f98d9d629855a952bd11", HashAcquire, "Redisson RLock lock (and RSpinLock's)", "3.12.3-3.18", "redisson-3.52.0-spinlock"},
	{shaRedissonLock310, "0314dfd8f9eeb2303970822567285dd2f66f6eb3", HashAcquire, "Redisson RLock lock", "3.10.0-3.10.5", "source"},
	{shaRedissonUnlock, "ab6cd014de9972ca9a2c54e5a840467b51e29c4e", HashRelease, "Redisson RLock unlock (latch in KEYS[3])", "3.24+", "redisson-3.52.0-rlock"},
	{shaRedissonUnlock322, "d737cf5921f1aa2b1799d2b5bb492337375a1a40", HashRelease, "Redisson RLock unlock (ARGV[4] the publish command)", "3.22-3.23", "redisson-3.23.4"},
	{shaRedissonUnlock3106, "e8ba4578b34d5a72da67296df9c5cb5511d6463a", HashRelease, "Redisson RLock unlock", "3.10.6-3.21", "source"},
	{shaRedissonUnlock310, "084f8e83f91450db42a0b2d7565eee30e14eb730", HashRelease, "Redisson RLock unlock (a missing lock counts released)", "3.10.0-3.10.5", "source"},
	{shaRedissonRenew, "de633ca364455db1e1d33351ffd9d8cc7add3421", HashExtend, "Redisson RLock watchdog", "up to 3.43", "redisson-3.23.4"},
	{shaRedissonRenewBatch, "e06c2cadc840d716824e9a18aa02b6ed4b3ee973", HashExtendAll, "Redisson RLock watchdog, batched", "3.44+", "redisson-3.52.0-rlock"},
	{shaRedissonForce, "6a7677933c73c152a3f522c00e1e923d2efcbfdf", ForceUnlock, "Redisson RLock forceUnlock", "3.22+", "redisson-3.52.0-rlock"},
	{shaRedissonForceOld, "03067588dd28e9050ee180c7ecfc33c9e5049cac", ForceUnlock, "Redisson RLock forceUnlock", "3.10.6-3.21", "source"},
	{shaRedissonFencedLock, "92417f705314ddfbf47d78729d1837be536b2710", FencedAcquire, "Redisson RFencedLock lock", "3.23+", "redisson-3.23.4-spin-fenced"},
	{shaRedissonFencedTry, "45e1fc36d73b1a57679923ff97cd5f234668aa36", FencedTryAcquire, "Redisson RFencedLock tryLock", "3.23+", "redisson-3.23.4"},
	{redissonMultiLease, "b9ec519cbd35b52aaa3bd68813db06b153b19185", HashLeaseAll, "Redisson RedissonMultiLock lease (RedissonExpirable's PEXPIRE of every KEY)", "3.52", "redisson-3.52.0-multilock"},
	{redissonSpinUnlock323, "9a94b05cb42473c94ec2ea972ae84eb6547893a8", HashRelease, "Redisson RSpinLock unlock: no channel, no latch; 1, 0 or nil", "3.23", "redisson-3.23.4-spin-fenced"},
	{redissonSpinUnlock352, "3f7b881d30358e364aabf9791f73432a198fba05", HashRelease, "Redisson RSpinLock unlock: latch in KEYS[2], its TTL in ARGV[3]; no channel", "3.52", "redisson-3.52.0-spinlock"},
	{redissonSpinForceUnlock, "5f0031a6baba88a6185f2f03991ca9a7f455e208", ForceUnlock, "Redisson RSpinLock forceUnlock: DEL KEYS[1], 1/0, no channel", "3.23, 3.52", "redisson-3.52.0-spinlock"},
	{"eb0c00d98f6f33b4262419a509002884540f30be", "746e353a65b565f0d788a5bd379f409565012e18", BsmObtain, "bsm/redislock obtain (several keys; ARGV value, token length, ms)", "v0.10.0+", "go-bsm-redislock-0.10.0"},
	{"5a22d7e8431313862816d4416b5e46dd70fc340d", "11feed21309121baa7341787ba6dd3d25719267e", BsmRefresh, "bsm/redislock refresh (ARGV value, ms)", "v0.10.0+", "go-bsm-redislock-0.10.0"},
	{"9470c810040e272ee6c579d8d4331aaf6332a7b1", "f5c23beb5f69a7b39453923b8e0a217467cd9865", BsmRelease, "bsm/redislock release (ARGV value)", "v0.10.0+", "go-bsm-redislock-0.10.0"},
	{"66e1084c2d842a7e8c271925aae90219fac4e129", "67b4f502051effbba4e88871c0d7a41d91e1509a", BsmPTTL, "bsm/redislock pttl (ARGV value)", "v0.10.0+", "go-bsm-redislock-0.10.0"},
	// RReadWriteLock's (rwspecs.go; their layouts are rwSpecs').
	{rwReadLock, "b648ee8c674b38f4359b8b271c30ec55cca07c0d", HashAcquire, "Redisson RReadWriteLock readLock().lock", "3.23, 3.52", "redisson-3.52.0-rwlock"},
	{rwWriteLock, "891e37a84a9a5bfcf16813b344329b8399977ddc", HashAcquire, "Redisson RReadWriteLock writeLock().lock", "3.23, 3.52", "redisson-3.52.0-rwlock"},
	{rwReadUnlock323, "e8a2580baa8483699466adf8364ce00036d7f64e", HashRelease, "Redisson RReadWriteLock readLock().unlock", "3.23", "redisson-3.23.4-rwlock"},
	{rwReadUnlock352, "a313a4ae0a712390be1cdeaa1fd32851dbd1cbee", HashRelease, "Redisson RReadWriteLock readLock().unlock", "3.52", "redisson-3.52.0-rwlock"},
	{rwWriteUnlock323, "88343bf1ffb76c7863994e40a2a4d8f2d2ae5ace", HashRelease, "Redisson RReadWriteLock writeLock().unlock", "3.23", "redisson-3.23.4-rwlock"},
	{rwWriteUnlock352, "36674bd9e06b12ed15768adfef38bb853fdca98e", HashRelease, "Redisson RReadWriteLock writeLock().unlock", "3.52", "redisson-3.52.0-rwlock"},
	{rwReadRenew323, "96a9d01b09170f99575bc9369262d3e435b928be", HashExtend, "Redisson RReadWriteLock reader's watchdog", "3.23", "redisson-3.23.4-rwlock"},
	{rwReadRenew352, "ec4a591a21387b42f589582077a75602424d90a4", HashExtendAll, "Redisson RReadWriteLock readers' watchdog, batched", "3.52", "redisson-3.52.0-rwlock"},
	{rwReadForceUnlock, "751d67728a08b875d53292cccd6d75f6bc6b99b7", ForceUnlock, "Redisson RReadWriteLock readLock().forceUnlock", "3.23, 3.52", "redisson-3.52.0-rwlock"},
	{rwWriteForceUnlock, "a04c100f619391a9d222d020c10d24e176fcfcf5", ForceUnlock, "Redisson RReadWriteLock writeLock().forceUnlock", "3.23, 3.52", "redisson-3.52.0-rwlock"},
	{rwReadIsLocked352, "c63cb17447856d93fa086dabd953d2abba577c15", ReadLocked, "Redisson RReadWriteLock readLock().isLocked", "3.52", "redisson-3.52.0-rwlock"},
	// Releases between 3.23.5 and 3.52.0 (issue 26): their SHA1s and layouts
	// from each release's source text (the scripts as its classes concatenate
	// them), each 3.52's text but for a line or two; e2e
	// TestRedissonBetweenVersions sends them by EVALSHA.
	{rwReadUnlock324, "6c29d011ff00445adbf29ceac0aae1e29144bf22", HashRelease, "Redisson RReadWriteLock readLock().unlock (latch in KEYS[5])", "3.24.0-3.43.0", "redisson-3.30.0-rwlock"},
	{rwWriteUnlock324, "f9c6c3a11d0accad42255c81b3e47c70bd3f9339", HashRelease, "Redisson RReadWriteLock writeLock().unlock (latch in KEYS[3])", "3.24.0-3.43.0", "redisson-3.30.0-rwlock"},
	{fairUnlock324, "ce81a03c3357dea2462329906595b35af269e6b9", HashRelease, "Redisson RFairLock unlock (latch in KEYS[5])", "3.24.0-3.30.0", "redisson-3.30.0-fairlock"},
	{fairLock332, "5cf241745794420821520d1b332fa37ebfbeb5b7", FairAcquire, "Redisson RFairLock lock, tryLock with a wait", "3.32.0-3.44.0", "redisson-3.43.0-fairlock"},
	// RFairLock's (fairspecs.go; their layouts are fairSpecs').
	{fairLock323, "51ee65a9c7cd813d274c02e5c9afda2f654e9f22", FairAcquire, "Redisson RFairLock lock, tryLock with a wait", "3.23", "redisson-3.23.4-fairlock"},
	{fairTry323, "c2b69733b0a62c2cd8c696c437f00c03e48240d9", FairTryAcquire, "Redisson RFairLock tryLock()", "3.23", "redisson-3.23.4-fairlock"},
	{fairUnlock323, "166caf75be8237cc25bb96120e826b9f0f95f88f", HashRelease, "Redisson RFairLock unlock", "3.23", "redisson-3.23.4-fairlock"},
	{fairForce323, "c2ba9ede106e223e2fc265ef3894868939c4e939", ForceUnlock, "Redisson RFairLock forceUnlock", "3.23", "redisson-3.23.4-fairlock"},
	{fairLock352, "79d6258722bc8c48945970e54939c414a7ef7ba8", FairAcquire, "Redisson RFairLock lock, tryLock with a wait", "3.52", "redisson-3.52.0-fairlock"},
	{fairTry352, "f0e49379473c69d8c6411570b00d522e66aea769", FairTryAcquire, "Redisson RFairLock tryLock()", "3.52", "redisson-3.52.0-fairlock"},
	{fairUnlock352, "5d52ea72ac2d379cf8dcdd8bcbc5ef5b9f9c434e", HashRelease, "Redisson RFairLock unlock (latch in KEYS[5])", "3.52", "redisson-3.52.0-fairlock"},
	{fairForce352, "6af2cc928a0cca6264252109f39c656bdf930d38", ForceUnlock, "Redisson RFairLock forceUnlock", "3.52", "redisson-3.52.0-fairlock"},
	{fairLeave, "ef8ff68354fa2d0bd9ba9287ba48a61450920de9", FairLeave, "Redisson RFairLock acquireFailed (a waiter gives up)", "3.23, 3.52", "redisson-3.52.0-fairlock"},
	// RPermitExpirableSemaphore's (permitspecs.go; their layouts are permitSpecs').
	{permitAcquireSHA, "c82e849e10107fb0601a1455af93db8214cde73a", Permits, "Redisson RPermitExpirableSemaphore acquire, tryAcquire", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitReleaseSHA, "2aad8e439594f051190e9b8aeede7815e439293a", Permits, "Redisson RPermitExpirableSemaphore release(id), tryRelease(id)", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitReleaseAnySHA, "ed8529b103cef306e83b08ff3a10e3e3ad239872", Permits, "Redisson RPermitExpirableSemaphore release(ids), tryRelease(ids)", "3.23", "redisson-3.23.4-permitsemaphore-redis"},
	{permitReleaseAllSHA, "f11e4677c2d4ef4b1b126d45b3f206f3ed872964", Permits, "Redisson RPermitExpirableSemaphore release(ids), tryRelease(ids): all or none", "3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitAvailableSHA, "b8618b3ebd89e573818e64764f0b0cc7ddcd09b2", Permits, "Redisson RPermitExpirableSemaphore availablePermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitTotalSHA, "96836d1c2158aac32390a26a5e62529dc24f5e33", Permits, "Redisson RPermitExpirableSemaphore getPermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitAcquiredSHA, "6b4a44c84ef6ee458015bed38766f427270f2ca5", Permits, "Redisson RPermitExpirableSemaphore acquiredPermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitSetSHA, "734474298340208e1eb7664042b629b8194db5c1", Permits, "Redisson RPermitExpirableSemaphore setPermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitTrySetSHA, "31d4555f7c1a6f2bdb6478bfcc2c5323b94d3bc3", Permits, "Redisson RPermitExpirableSemaphore and RSemaphore trySetPermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitAddSHA, "f7842dff7da532488ae04c07a30dce78565fff5d", Permits, "Redisson RPermitExpirableSemaphore addPermits", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitLeaseSHA, "d3ab1be6262a698f3354a1a1a97509dfa0aad58e", Permits, "Redisson RPermitExpirableSemaphore updateLeaseTime", "3.23, 3.52", "redisson-3.52.0-permitsemaphore-redis"},
	{permitLeaseLeftSHA, "fdcd32e6b2f8eabe85d7d3e2ac9917eb093dabcc", Permits, "Redisson RPermitExpirableSemaphore getLeaseTime", "3.52", "redisson-3.52.0-permitsemaphore-redis"},
	// Clients that cannot run here: SHA1s and layouts from their source.
	{"175897a4e379e99e79a54937be09226f76cdcfe5", "", SpringObtain, "Spring Integration RedisLockRegistry obtain", "6.1.0-7.1.x", "source"},
	{"6d2bc6d16248df19e144841297222544e3c7800a", "", SpringObtain, "Spring Integration RedisLockRegistry obtain", "5.5.13-6.0.x", "source"},
	{"8426c8df41c64d8177dce3ecbbe9146ef3759cd2", "", SpringObtain, "Spring Integration RedisLockRegistry obtain", "5.4.0-5.5.12", "source"},
	{"f0f9038aa2b6d6c3436c72d147573ea2a58f0ef2", "", SpringRelease, "Spring spin lock unlock (UNLINK)", "6.0.7-7.1.x", "source"},
	{"356d97191f2b63031781ccc0e8e82f02e1995a90", "", SpringRelease, "Spring spin lock unlock (DEL, where UNLINK is missing)", "6.0.7-6.5.x", "source"},
	{"7a71e9443a2a41539fb115a5a27d5a748a871aed", "", SpringReleaseNotify, "Spring pub/sub lock unlock (UNLINK)", "6.0.7-7.1.x", "source"},
	{"b2dedc0ab01c17f9f20e3e6ddb62dcb6afbed0bd", "", SpringReleaseNotify, "Spring pub/sub lock unlock (DEL)", "6.0.7-6.5.x", "source"},
	{"67aebbcba76d9674162e8906de1f669866f48e07", "", SpringReleaseNotifyKey, "Spring pub/sub lock unlock (UNLINK), channel in KEYS[2]", "6.4.8-6.5.3", "source"},
	{"4d7192f70618a620282e427698f9cde890151e58", "", SpringReleaseNotifyKey, "Spring pub/sub lock unlock (DEL), channel in KEYS[2]", "6.4.8-6.5.6", "source"},
	{"c1ae6c899d164de076f40ffe82eba8fb8e27af6c", "", SpringDeleteNotify, "Spring pub/sub lock unlock (UNLINK)", "5.5.7-6.1.2", "source"},
	{"20b5c3728736e2367b496c16390f9df56916a76f", "", SpringDeleteNotify, "Spring pub/sub lock unlock (DEL)", "5.5.7-6.1.2", "source"},
	{"879e0f7b8d83c3266d4e996627438c05dbda0b89", "", SpringRenew, "Spring renew", "6.4.0-7.1.x", "source"},
	{"67256370c2d1c87e2250898075542b1a7fa5b917", "", Extend, "ShedLock update (compare-and-PEXPIRE, safeUpdate)", "6.7.0-7.9.0", "source"},
}

// byNorm maps a normalised text's SHA1 to the row whose layout a variant
// of it gets. Rows sharing a normalised text share their kind and layout
// (TestScriptFactsAgree), so any of them will do: the first.
var byNorm = func() map[string]string {
	m := map[string]string{}
	for _, f := range scriptFacts {
		if _, ok := m[f.norm]; f.norm != "" && !ok {
			m[f.norm] = f.sha
		}
	}
	return m
}()
