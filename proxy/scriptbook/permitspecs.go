package scriptbook

// Redisson's RPermitExpirableSemaphore scripts (proxy/permits.go): their SHA1s,
// layouts and steps.

// The semaphore's scripts by SHA1, as Redisson 3.23.4 and 3.52.0 send them
// (recorded with the real clients:
// compat/transcripts/redisson-*-permitsemaphore*.jsonl). N is the
// semaphore, C its channel, T its timeouts (never touched).
const (
	permitAcquireSHA    = "992c96b09a3d8ea0b37f5dc12e5347a44d93909d" // acquire, tryAcquire (any count, lease, wait): N, T, C
	permitReleaseSHA    = "4ce079451bee2993ce00c8a4e205b536c6ccad67" // release(id), tryRelease(id): N, C, T
	permitReleaseAnySHA = "bb41a8ec1cd921c89e9d8f2ddde38ad13a2e8b74" // 3.23's release(ids), tryRelease(ids): N, C, T
	permitReleaseAllSHA = "cf3ab77b1c0ae1226ae0e06e5cb18ee75f56c96b" // 3.52's release(ids), tryRelease(ids): N, C, T
	permitAvailableSHA  = "26b3972b2c9e617556282f404cb79709d746a713" // availablePermits: N, T, C
	permitTotalSHA      = "e242db5c1c68811b0d26a41937dcf22415b6d872" // getPermits: N, T, C
	permitAcquiredSHA   = "6f0b0be79a0c146c778cb14f40c10eb5b706e574" // acquiredPermits: N, T, C
	permitSetSHA        = "494d8561fee0cdb033f6c28d74c052c52189a578" // setPermits: N, C, T
	permitTrySetSHA     = "241ce4e87e652b4f9b39d33cbcd7df9ee8ed906c" // trySetPermits (RSemaphore's too): N, C
	permitAddSHA        = "ec6fb1cd5f66817424e8fe70fee7929391b7c6f0" // addPermits: N, C
	permitLeaseSHA      = "2298b02cc67a89f2a638e47503db3675c73d77f5" // updateLeaseTime: N, T, C
	permitLeaseLeftSHA  = "8be95cb5221cc7ee883cacb8859a8b32ef501a0e" // 3.52's getLeaseTime: N, T, C
)

// permitSpecs are the semaphore scripts' specs.
var permitSpecs = func() map[string]Spec {
	ntc := func(step PermitStep) Spec { // KEYS N, T, C
		return Spec{Kind: Permits, Key: Key(1), Channel: Key(3), Unused: []int{2}, Permit: step}
	}
	nct := func(step PermitStep) Spec { // KEYS N, C, T
		return Spec{Kind: Permits, Key: Key(1), Channel: Key(2), Unused: []int{3}, Permit: step}
	}
	return map[string]Spec{
		permitAcquireSHA: ntc(PermitAcquire), permitReleaseSHA: nct(PermitRelease),
		permitReleaseAnySHA: nct(PermitReleaseAny), permitReleaseAllSHA: nct(PermitReleaseAll),
		permitAvailableSHA: ntc(PermitAvailable), permitTotalSHA: ntc(PermitTotal), permitAcquiredSHA: ntc(PermitAcquired),
		permitSetSHA: nct(PermitSet), permitLeaseSHA: ntc(PermitLease), permitLeaseLeftSHA: ntc(PermitLeaseLeft),
		permitTrySetSHA: {Kind: Permits, Key: Key(1), Channel: Key(2), Permit: PermitTrySet},
		permitAddSHA:    {Kind: Permits, Key: Key(1), Channel: Key(2), Permit: PermitAdd},
	}
}()

// PermitStep is what one of the semaphore's scripts does.
type PermitStep uint8

const (
	PermitAcquire    PermitStep = iota + 1 // ARGV[1] n, [2] the lease's end, [3] the client's clock, [4] "no lease", [5] publish command, [6..] the n ids; OK, ":<when one lapses>" or nil
	PermitRelease                          // ARGV[1] id, [2] 1, [3] clock, [4] publish command; 1/0
	PermitReleaseAny                       // 3.23 release(ids): ARGV[1] n, [2] clock, [3] publish command, [4..] ids; how many were held
	PermitReleaseAll                       // 3.52 release(ids): as PermitReleaseAny, but 0 (and none released) unless all were held
	PermitAvailable                        // ARGV[1] clock; the permits not held
	PermitTotal                            // ARGV[1] clock; the permits
	PermitAcquired                         // ARGV[1] clock; the permits held
	PermitSet                              // ARGV[1] n: the semaphore has n permits; nil
	PermitTrySet                           // ARGV[1] n: unless set; 1/0
	PermitAdd                              // ARGV[1] n more (or fewer); nil
	PermitLease                            // updateLeaseTime: ARGV[1] id, [2] the lease's end, [3] clock; 1/0
	PermitLeaseLeft                        // 3.52 getLeaseTime: ARGV[1] id, [2] "no lease", [3] clock; ms left, 0 when not held
)

// PermitArgs is how many ARGV each step reads at least.
var PermitArgs = map[PermitStep]int{PermitAcquire: 5, PermitRelease: 1, PermitReleaseAny: 3, PermitReleaseAll: 3,
	PermitSet: 1, PermitTrySet: 1, PermitAdd: 1, PermitLease: 3, PermitLeaseLeft: 1}

// MaxPermitIDs bounds the permits one acquire or release names: each is a
// quorum round.
const MaxPermitIDs = 128
