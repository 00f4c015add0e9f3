package scriptbook

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// The script book: for every lock script the proxy runs, a spec of what it
// means (its kind) and where its KEYS and ARGV hold the lock key, the owner,
// the TTL and the rest. Specs come from one layout per kind, with the
// per-SHA1 differences of some client versions on top; operator-registered
// scripts are specs with their own positions (proxy/registered.go). EVAL and
// EVALSHA read a script's operands through its spec (proxy/specoperands.go)
// and run its kind's meaning (proxy/scriptcmds.go).

// Kind is what a recognised script means as a lock operation.
type Kind uint8

const (
	Release                Kind = iota + 1 // KEYS[1], ARGV[1] owner: compare-and-delete, 1/0
	Extend                                 // KEYS[1], ARGV[1] owner, ARGV[2] ms: compare-and-PEXPIRE, 1/0
	ExtendPy                               // redis-py: ARGV[2] ms added to the TTL when ARGV[3] is "0", else replacing it; 1/0
	ReleaseMissing                         // redsync: as Release, but -1 when the key is missing
	ExtendOrAcquire                        // redsync touch with SetNX: extend, or acquire when the key is missing; 1/0
	Obtain                                 // bsm/redislock: ARGV[1] value, ARGV[3] ms: acquire (or re-obtain one's own); +OK or nil
	OwnerPTTL                              // bsm/redislock: the owner's PTTL in ms, else -3
	AcquireAll                             // node-redlock: every KEY for ARGV[1], ARGV[2] ms, or none; #KEYS or 0
	ExtendAll                              // node-redlock: every KEY extended to ARGV[2] ms if all hold ARGV[1]; #KEYS or 0
	ReleaseAll                             // node-redlock: KEYS holding ARGV[1] deleted; how many
	Acquire                                // registered scripts: KEYS[1] for ARGV[1], ARGV[2] ms; the operator's replies
	HashAcquire                            // Redisson RLock: KEYS[1] for owner ARGV[2], ARGV[1] lease ms, reentrant; nil or the holder's PTTL
	FencedAcquire                          // Redisson RFencedLock lock(): as HashAcquire, counting tokens in KEYS[2]
	FencedTryAcquire                       // Redisson RFencedLock tryLock: {-1, token} or {pttl, -1}
	HashRelease                            // Redisson unlock: KEYS[1] lock, KEYS[2] channel (KEYS[3] latch); ARGV[1] message, [2] lease, [3] owner; 1, 0 or nil
	HashExtend                             // Redisson renewal: KEYS[1], ARGV[1] lease ms, ARGV[2] owner; 1/0
	HashExtendAll                          // Redisson batched renewal: KEYS[i] for owner ARGV[i+1], ARGV[1] lease ms; array of 1/0
	ForceUnlock                            // Redisson forceUnlock: KEYS[1] deleted, ARGV[1] published on KEYS[2]; 1/0
	SpringObtain                           // Spring: KEYS[1] for ARGV[1], ARGV[2] ms, re-obtaining one's own; true (1) or false (nil)
	SpringRelease                          // Spring: compare-and-UNLINK; true/false
	SpringReleaseNotify                    // Spring with pub/sub: as SpringRelease, then KEYS[1] published on ARGV[2]
	SpringRenew                            // Spring: compare-and-PEXPIRE, ARGV[2] ms; true/false
	SpringReleaseNotifyKey                 // Spring 6.4.8-6.5.x pub/sub: as SpringReleaseNotify, the channel in KEYS[2]
	SpringDeleteNotify                     // Spring 5.5.7-6.1.2 pub/sub: KEYS[1] deleted whoever holds it (checked by GET before), published on ARGV[1]; true/false
	BsmObtain                              // bsm/redislock v0.10: every KEY for ARGV[1] (or re-obtained, token ARGV[2] bytes long), ARGV[3] ms, or none; +OK or nil
	BsmRefresh                             // bsm/redislock v0.10: every KEY extended to ARGV[2] ms if all hold ARGV[1]; +OK or nil
	BsmRelease                             // bsm/redislock v0.10: every KEY released if all hold ARGV[1]; +OK or nil
	BsmPTTL                                // bsm/redislock v0.10: the shortest PTTL if every KEY holds ARGV[1], else nil
	HashLeaseAll                           // RedissonMultiLock's lease: every KEY's TTL set to ARGV[1] ms (ARGV[2] a PEXPIRE option), no owner; 1 if any was set
	ReadLocked                             // Redisson 3.52 RReadWriteLock's readLock().isLocked(): KEYS[1]; 1/0
	FairAcquire                            // Redisson RFairLock lock(): HashAcquire in turn, queued in KEYS[2] (proxy/fairlock.go); nil or ms to wait
	FairTryAcquire                         // Redisson RFairLock tryLock(): in turn, never queued; nil or 1
	FairLeave                              // Redisson RFairLock's waiter gives up: ARGV[1] leaves queue KEYS[1]; nil
	Permits                                // Redisson RPermitExpirableSemaphore: KEYS[1] the semaphore, a channel; the step Spec.Permit says (proxy/permits.go)
)

func (k Kind) String() string {
	return map[Kind]string{Release: "release", Extend: "extend", ExtendPy: "extend (add or replace)",
		ReleaseMissing: "release (-1 when missing)", ExtendOrAcquire: "extend or acquire",
		Obtain: "obtain", OwnerPTTL: "owner's pttl",
		AcquireAll: "acquire all keys", ExtendAll: "extend all keys", ReleaseAll: "release all keys",
		Acquire: "acquire", HashAcquire: "reentrant acquire", FencedAcquire: "fenced acquire",
		FencedTryAcquire: "fenced try-acquire", HashRelease: "reentrant release", HashExtend: "reentrant extend",
		HashExtendAll: "reentrant extend of many keys", ForceUnlock: "force unlock",
		SpringObtain: "obtain (true/false)", SpringRelease: "release (true/false)",
		SpringReleaseNotify: "release and notify (true/false)", SpringRenew: "extend (true/false)",
		SpringReleaseNotifyKey: "release and notify (true/false)", SpringDeleteNotify: "delete and notify (true/false)",
		BsmObtain: "obtain all keys", BsmRefresh: "refresh all keys", BsmRelease: "release all keys (OK/nil)",
		BsmPTTL: "owner's pttl of all keys", HashLeaseAll: "lease of many keys", ReadLocked: "is read-locked",
		FairAcquire: "fair acquire", FairTryAcquire: "fair try-acquire", FairLeave: "leave a fair queue",
		Permits: "semaphore permits"}[k]
}

// Pos is where an operand is: KEYS[i] or ARGV[i], 1-based; i 0: nowhere.
type Pos struct {
	InKeys bool
	N      int
}

func Key(i int) Pos { return Pos{InKeys: true, N: i} }
func Arg(i int) Pos { return Pos{N: i} }

func (p Pos) String() string {
	if p.InKeys {
		return fmt.Sprintf("KEYS[%d]", p.N)
	}
	return fmt.Sprintf("ARGV[%d]", p.N)
}

// Spec is one script's meaning and the places of its operands.
type Spec struct {
	Kind     Kind
	Key      Pos    // the lock key
	Owner    Pos    // the owner value
	TTL      Pos    // the TTL or lease in ms
	TTLCmd   string // the command an invalid TTL is blamed on, as the script's own call would be: "set" or "pexpire"
	Token    Pos    // the fencing token counter (Redisson's RFencedLock)
	Channel  Pos    // where a release is published
	Message  Pos    // what is published
	Latch    Pos    // Redisson's unlock latch key (3.24+)
	LatchTTL Pos    // and its TTL in ms
	Queue    Pos    // Redisson RFairLock's queue of waiters (proxy/fairlock.go)
	Wait     Pos    // and how long a waiter keeps its place past its wait, in ms
	// DBFirst: ARGV[1] is a database index the script SELECTs
	// (@sesamecare-oss/redlock); the ARGV places count after it.
	DBFirst bool
	// OwnerPerKey: ARGV[i+1] is the owner of KEYS[i] (Redisson's batched renewal).
	OwnerPerKey bool
	// KeyPairs: the KEYS come in pairs, a lock and a name of its (with
	// OwnerPerKey, the i-th pair's owner in ARGV[i+1]).
	KeyPairs bool
	// RW: a script of Redisson's RReadWriteLock, "read" or "write" (proxy/rwlock.go).
	RW string
	// Permit: the step of Redisson's RPermitExpirableSemaphore (proxy/permits.go).
	Permit PermitStep
	// Unused are the KEYS positions (1-based) the proxy never reads or
	// writes for this script; with keyPairs, every second one too.
	Unused []int
	// AbsentReleased: unlocking a missing lock answers 1 (Redisson 3.10.0-3.10.5).
	AbsentReleased bool
	// Replies: an operator-registered script's reply convention (proxy/registered.go).
	Replies *Convention
}

// layouts is each kind's spec as the clients' own scripts have it.
var layouts = map[Kind]Spec{
	Release:                {Key: Key(1), Owner: Arg(1)},
	ReleaseMissing:         {Key: Key(1), Owner: Arg(1)},
	Extend:                 {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	ExtendPy:               {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	ExtendOrAcquire:        {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	Obtain:                 {Key: Key(1), Owner: Arg(1), TTL: Arg(3), TTLCmd: "set"},
	OwnerPTTL:              {Key: Key(1), Owner: Arg(1)},
	AcquireAll:             {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "set"},
	ExtendAll:              {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "set"},
	ReleaseAll:             {Key: Key(1), Owner: Arg(1)},
	Acquire:                {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "set"},
	HashAcquire:            {Key: Key(1), Owner: Arg(2), TTL: Arg(1), TTLCmd: "pexpire"},
	FencedAcquire:          {Key: Key(1), Token: Key(2), Owner: Arg(2), TTL: Arg(1), TTLCmd: "pexpire"},
	FencedTryAcquire:       {Key: Key(1), Token: Key(2), Owner: Arg(2), TTL: Arg(1), TTLCmd: "pexpire"},
	HashRelease:            {Key: Key(1), Channel: Key(2), Message: Arg(1), TTL: Arg(2), TTLCmd: "pexpire", Owner: Arg(3)},
	HashExtend:             {Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2)},
	HashExtendAll:          {Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire", Owner: Arg(2), OwnerPerKey: true},
	ForceUnlock:            {Key: Key(1), Channel: Key(2), Message: Arg(1)},
	SpringObtain:           {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	SpringRelease:          {Key: Key(1), Owner: Arg(1)},
	SpringReleaseNotify:    {Key: Key(1), Owner: Arg(1), Channel: Arg(2), Message: Key(1)},
	SpringRenew:            {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	SpringReleaseNotifyKey: {Key: Key(1), Owner: Arg(1), Channel: Key(2), Message: Key(1)},
	SpringDeleteNotify:     {Key: Key(1), Channel: Arg(1), Message: Key(1)},
	BsmObtain:              {Key: Key(1), Owner: Arg(1), TTL: Arg(3), TTLCmd: "pexpire"},
	BsmRefresh:             {Key: Key(1), Owner: Arg(1), TTL: Arg(2), TTLCmd: "pexpire"},
	BsmRelease:             {Key: Key(1), Owner: Arg(1)},
	BsmPTTL:                {Key: Key(1), Owner: Arg(1)},
	HashLeaseAll:           {Key: Key(1), TTL: Arg(1), TTLCmd: "pexpire"},
}

// versionSpecs are the SHA1s whose layout differs from their kind's.
var versionSpecs = map[string]func(*Spec){
	shaRedissonUnlock:       func(s *Spec) { s.Latch, s.LatchTTL = Key(3), Arg(5) }, // 3.24+: ARGV[4] is the publish command
	shaRedissonUnlock310:    func(s *Spec) { s.AbsentReleased = true },
	shaSesamecareAcquire:    func(s *Spec) { s.DBFirst = true },
	redissonSpinUnlock323:   spinUnlock,                                                            // KEYS[1], ARGV[1] lease, ARGV[2] owner
	redissonSpinUnlock352:   func(s *Spec) { spinUnlock(s); s.Latch, s.LatchTTL = Key(2), Arg(3) }, // and the latch
	redissonSpinForceUnlock: func(s *Spec) { s.Channel, s.Message = Pos{}, Pos{} },
	shaSesamecareExtend:     func(s *Spec) { s.DBFirst = true },
	shaSesamecareRelease:    func(s *Spec) { s.DBFirst = true },
}

// spinUnlock is RSpinLock's unlock: RLock's without the channel, the lease in
// ARGV[1] and the owner in ARGV[2].
func spinUnlock(s *Spec) {
	s.Channel, s.Message, s.TTL, s.Owner = Pos{}, Pos{}, Arg(1), Arg(2)
}

// SpecFor is the spec of a known script: its kind's layout, with the
// differences of its version.
func SpecFor(sha string, kind Kind) *Spec {
	s := layouts[kind]
	s.Kind = kind
	if f := versionSpecs[sha]; f != nil {
		f(&s)
	}
	return &s
}

// Book is every known script's spec by SHA1: EVALSHA works for them on a
// fresh replica without a NOSCRIPT round trip.
var Book = func() map[string]*Spec {
	m := map[string]*Spec{}
	for _, f := range scriptFacts {
		m[f.sha] = SpecFor(f.sha, f.kind)
	}
	for sha, sp := range rwSpecs {
		m[sha] = &sp
	}
	for sha, sp := range fairSpecs {
		m[sha] = &sp
	}
	for sha, sp := range permitSpecs {
		m[sha] = &sp
	}
	return m
}()

// Registry resolves script texts and SHA1s to meanings. It is shared by
// all connections, like Redis's script cache.
type Registry struct {
	Custom map[string]*Spec // SHA1 -> operator-registered meaning; fixed after New

	mu     sync.RWMutex
	loaded map[string]map[string]*Spec // tenant -> SHA1 -> spec, for texts seen via EVAL / SCRIPT LOAD
}

// maxLoadedScripts bounds each tenant's cache against clients that send
// endless variants; a tenant that fills it empties its own, no other's.
const maxLoadedScripts = 4096

// SHA1Hex is the SHA1 of s in lower-case hex, as Redis names a script.
func SHA1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Recognise returns the spec of script text, remembering its SHA1.
func (r *Registry) Recognise(tenant, text string) (sha string, sp *Spec, ok bool) {
	sha = SHA1Hex(text)
	if sp, ok = Book[sha]; ok {
		return sha, sp, true
	}
	if sp, ok = r.Custom[sha]; ok {
		return sha, sp, true
	}
	norm := normalizeScript(text)
	if row, ok := byNorm[SHA1Hex(norm)]; ok {
		sp = Book[row] // a copy of a known client's script: its layout
	} else if kind, ok := canonicalForms[norm]; ok {
		sp = SpecFor(sha, kind)
	} else {
		return sha, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded == nil {
		r.loaded = map[string]map[string]*Spec{}
	}
	if len(r.loaded[tenant]) >= maxLoadedScripts {
		r.loaded[tenant] = nil
	}
	if r.loaded[tenant] == nil {
		r.loaded[tenant] = map[string]*Spec{}
	}
	r.loaded[tenant][sha] = sp
	return sha, sp, true
}

// BySHA returns the spec of a script by SHA1 (any case).
func (r *Registry) BySHA(tenant, sha string) (*Spec, bool) {
	sha = strings.ToLower(sha)
	if sp, ok := Book[sha]; ok {
		return sp, true
	}
	if sp, ok := r.Custom[sha]; ok {
		return sp, true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	sp, ok := r.loaded[tenant][sha]
	return sp, ok
}

// Flush forgets the scripts one tenant loaded (SCRIPT FLUSH).
func (r *Registry) Flush(tenant string) {
	r.mu.Lock()
	delete(r.loaded, tenant)
	r.mu.Unlock()
}
