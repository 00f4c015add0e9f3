package proxy

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
// scripts are specs with their own positions (registered.go). EVAL and
// EVALSHA read a script's operands through its spec (operands, below) and
// run its kind's meaning (scriptcmds.go).

// scriptKind is what a recognised script means as a lock operation.
type scriptKind uint8

const (
	scriptRelease                scriptKind = iota + 1 // KEYS[1], ARGV[1] owner: compare-and-delete, 1/0
	scriptExtend                                       // KEYS[1], ARGV[1] owner, ARGV[2] ms: compare-and-PEXPIRE, 1/0
	scriptExtendPy                                     // redis-py: ARGV[2] ms added to the TTL when ARGV[3] is "0", else replacing it; 1/0
	scriptReleaseMissing                               // redsync: as scriptRelease, but -1 when the key is missing
	scriptExtendOrAcquire                              // redsync touch with SetNX: extend, or acquire when the key is missing; 1/0
	scriptObtain                                       // bsm/redislock: ARGV[1] value, ARGV[3] ms: acquire (or re-obtain one's own); +OK or nil
	scriptOwnerPTTL                                    // bsm/redislock: the owner's PTTL in ms, else -3
	scriptAcquireAll                                   // node-redlock: every KEY for ARGV[1], ARGV[2] ms, or none; #KEYS or 0
	scriptExtendAll                                    // node-redlock: every KEY extended to ARGV[2] ms if all hold ARGV[1]; #KEYS or 0
	scriptReleaseAll                                   // node-redlock: KEYS holding ARGV[1] deleted; how many
	scriptAcquire                                      // registered scripts: KEYS[1] for ARGV[1], ARGV[2] ms; the operator's replies
	scriptHashAcquire                                  // Redisson RLock: KEYS[1] for owner ARGV[2], ARGV[1] lease ms, reentrant; nil or the holder's PTTL
	scriptFencedAcquire                                // Redisson RFencedLock lock(): as scriptHashAcquire, counting tokens in KEYS[2]
	scriptFencedTryAcquire                             // Redisson RFencedLock tryLock: {-1, token} or {pttl, -1}
	scriptHashRelease                                  // Redisson unlock: KEYS[1] lock, KEYS[2] channel (KEYS[3] latch); ARGV[1] message, [2] lease, [3] owner; 1, 0 or nil
	scriptHashExtend                                   // Redisson renewal: KEYS[1], ARGV[1] lease ms, ARGV[2] owner; 1/0
	scriptHashExtendAll                                // Redisson batched renewal: KEYS[i] for owner ARGV[i+1], ARGV[1] lease ms; array of 1/0
	scriptForceUnlock                                  // Redisson forceUnlock: KEYS[1] deleted, ARGV[1] published on KEYS[2]; 1/0
	scriptSpringObtain                                 // Spring: KEYS[1] for ARGV[1], ARGV[2] ms, re-obtaining one's own; true (1) or false (nil)
	scriptSpringRelease                                // Spring: compare-and-UNLINK; true/false
	scriptSpringReleaseNotify                          // Spring with pub/sub: as scriptSpringRelease, then KEYS[1] published on ARGV[2]
	scriptSpringRenew                                  // Spring: compare-and-PEXPIRE, ARGV[2] ms; true/false
	scriptSpringReleaseNotifyKey                       // Spring 6.4.8-6.5.x pub/sub: as scriptSpringReleaseNotify, the channel in KEYS[2]
	scriptSpringDeleteNotify                           // Spring 5.5.7-6.1.2 pub/sub: KEYS[1] deleted whoever holds it (checked by GET before), published on ARGV[1]; true/false
	scriptBsmObtain                                    // bsm/redislock v0.10: every KEY for ARGV[1] (or re-obtained, token ARGV[2] bytes long), ARGV[3] ms, or none; +OK or nil
	scriptBsmRefresh                                   // bsm/redislock v0.10: every KEY extended to ARGV[2] ms if all hold ARGV[1]; +OK or nil
	scriptBsmRelease                                   // bsm/redislock v0.10: every KEY released if all hold ARGV[1]; +OK or nil
	scriptBsmPTTL                                      // bsm/redislock v0.10: the shortest PTTL if every KEY holds ARGV[1], else nil
	scriptHashLeaseAll                                 // RedissonMultiLock's lease: every KEY's TTL set to ARGV[1] ms (ARGV[2] a PEXPIRE option), no owner; 1 if any was set
	scriptReadLocked                                   // Redisson 3.52 RReadWriteLock's readLock().isLocked(): KEYS[1]; 1/0
	scriptFairAcquire                                  // Redisson RFairLock lock(): scriptHashAcquire in turn, queued in KEYS[2] (fairlock.go); nil or ms to wait
	scriptFairTryAcquire                               // Redisson RFairLock tryLock(): in turn, never queued; nil or 1
	scriptFairLeave                                    // Redisson RFairLock's waiter gives up: ARGV[1] leaves queue KEYS[1]; nil
	scriptPermits                                      // Redisson RPermitExpirableSemaphore: KEYS[1] the semaphore, a channel; the step spec.permit says (permits.go)
)

func (k scriptKind) String() string {
	return map[scriptKind]string{scriptRelease: "release", scriptExtend: "extend", scriptExtendPy: "extend (add or replace)",
		scriptReleaseMissing: "release (-1 when missing)", scriptExtendOrAcquire: "extend or acquire",
		scriptObtain: "obtain", scriptOwnerPTTL: "owner's pttl",
		scriptAcquireAll: "acquire all keys", scriptExtendAll: "extend all keys", scriptReleaseAll: "release all keys",
		scriptAcquire: "acquire", scriptHashAcquire: "reentrant acquire", scriptFencedAcquire: "fenced acquire",
		scriptFencedTryAcquire: "fenced try-acquire", scriptHashRelease: "reentrant release", scriptHashExtend: "reentrant extend",
		scriptHashExtendAll: "reentrant extend of many keys", scriptForceUnlock: "force unlock",
		scriptSpringObtain: "obtain (true/false)", scriptSpringRelease: "release (true/false)",
		scriptSpringReleaseNotify: "release and notify (true/false)", scriptSpringRenew: "extend (true/false)",
		scriptSpringReleaseNotifyKey: "release and notify (true/false)", scriptSpringDeleteNotify: "delete and notify (true/false)",
		scriptBsmObtain: "obtain all keys", scriptBsmRefresh: "refresh all keys", scriptBsmRelease: "release all keys (OK/nil)",
		scriptBsmPTTL: "owner's pttl of all keys", scriptHashLeaseAll: "lease of many keys", scriptReadLocked: "is read-locked",
		scriptFairAcquire: "fair acquire", scriptFairTryAcquire: "fair try-acquire", scriptFairLeave: "leave a fair queue",
		scriptPermits: "semaphore permits"}[k]
}

// pos is where an operand is: KEYS[i] or ARGV[i], 1-based; i 0: nowhere.
type pos struct {
	inKeys bool
	i      int
}

func key(i int) pos { return pos{inKeys: true, i: i} }
func arg(i int) pos { return pos{i: i} }

func (p pos) String() string {
	if p.inKeys {
		return fmt.Sprintf("KEYS[%d]", p.i)
	}
	return fmt.Sprintf("ARGV[%d]", p.i)
}

// spec is one script's meaning and the places of its operands.
type spec struct {
	kind     scriptKind
	key      pos    // the lock key
	owner    pos    // the owner value
	ttl      pos    // the TTL or lease in ms
	ttlCmd   string // the command an invalid TTL is blamed on, as the script's own call would be: "set" or "pexpire"
	token    pos    // the fencing token counter (Redisson's RFencedLock)
	channel  pos    // where a release is published
	message  pos    // what is published
	latch    pos    // Redisson's unlock latch key (3.24+)
	latchTTL pos    // and its TTL in ms
	queue    pos    // Redisson RFairLock's queue of waiters (fairlock.go)
	wait     pos    // and how long a waiter keeps its place past its wait, in ms
	// dbFirst: ARGV[1] is a database index the script SELECTs
	// (@sesamecare-oss/redlock); the ARGV places count after it.
	dbFirst bool
	// ownerPerKey: ARGV[i+1] is the owner of KEYS[i] (Redisson's batched renewal).
	ownerPerKey bool
	// keyPairs: the KEYS come in pairs, a lock and a name of its (with
	// ownerPerKey, the i-th pair's owner in ARGV[i+1]).
	keyPairs bool
	// rw: a script of Redisson's RReadWriteLock, "read" or "write" (rwlock.go).
	rw string
	// permit: the step of Redisson's RPermitExpirableSemaphore (permits.go).
	permit permitStep
	// unused are the KEYS positions (1-based) the proxy never reads or
	// writes for this script; with keyPairs, every second one too.
	unused []int
	// absentReleased: unlocking a missing lock answers 1 (Redisson 3.10.0-3.10.5).
	absentReleased bool
	// replies: an operator-registered script's reply convention (registered.go).
	replies *convention
}

// layouts is each kind's spec as the clients' own scripts have it.
var layouts = map[scriptKind]spec{
	scriptRelease:                {key: key(1), owner: arg(1)},
	scriptReleaseMissing:         {key: key(1), owner: arg(1)},
	scriptExtend:                 {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptExtendPy:               {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptExtendOrAcquire:        {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptObtain:                 {key: key(1), owner: arg(1), ttl: arg(3), ttlCmd: "set"},
	scriptOwnerPTTL:              {key: key(1), owner: arg(1)},
	scriptAcquireAll:             {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "set"},
	scriptExtendAll:              {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "set"},
	scriptReleaseAll:             {key: key(1), owner: arg(1)},
	scriptAcquire:                {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "set"},
	scriptHashAcquire:            {key: key(1), owner: arg(2), ttl: arg(1), ttlCmd: "pexpire"},
	scriptFencedAcquire:          {key: key(1), token: key(2), owner: arg(2), ttl: arg(1), ttlCmd: "pexpire"},
	scriptFencedTryAcquire:       {key: key(1), token: key(2), owner: arg(2), ttl: arg(1), ttlCmd: "pexpire"},
	scriptHashRelease:            {key: key(1), channel: key(2), message: arg(1), ttl: arg(2), ttlCmd: "pexpire", owner: arg(3)},
	scriptHashExtend:             {key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2)},
	scriptHashExtendAll:          {key: key(1), ttl: arg(1), ttlCmd: "pexpire", owner: arg(2), ownerPerKey: true},
	scriptForceUnlock:            {key: key(1), channel: key(2), message: arg(1)},
	scriptSpringObtain:           {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptSpringRelease:          {key: key(1), owner: arg(1)},
	scriptSpringReleaseNotify:    {key: key(1), owner: arg(1), channel: arg(2), message: key(1)},
	scriptSpringRenew:            {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptSpringReleaseNotifyKey: {key: key(1), owner: arg(1), channel: key(2), message: key(1)},
	scriptSpringDeleteNotify:     {key: key(1), channel: arg(1), message: key(1)},
	scriptBsmObtain:              {key: key(1), owner: arg(1), ttl: arg(3), ttlCmd: "pexpire"},
	scriptBsmRefresh:             {key: key(1), owner: arg(1), ttl: arg(2), ttlCmd: "pexpire"},
	scriptBsmRelease:             {key: key(1), owner: arg(1)},
	scriptBsmPTTL:                {key: key(1), owner: arg(1)},
	scriptHashLeaseAll:           {key: key(1), ttl: arg(1), ttlCmd: "pexpire"},
}

// versionSpecs are the SHA1s whose layout differs from their kind's.
var versionSpecs = map[string]func(*spec){
	shaRedissonUnlock:       func(s *spec) { s.latch, s.latchTTL = key(3), arg(5) }, // 3.24+: ARGV[4] is the publish command
	shaRedissonUnlock310:    func(s *spec) { s.absentReleased = true },
	shaSesamecareAcquire:    func(s *spec) { s.dbFirst = true },
	redissonSpinUnlock323:   spinUnlock,                                                            // KEYS[1], ARGV[1] lease, ARGV[2] owner
	redissonSpinUnlock352:   func(s *spec) { spinUnlock(s); s.latch, s.latchTTL = key(2), arg(3) }, // and the latch
	redissonSpinForceUnlock: func(s *spec) { s.channel, s.message = pos{}, pos{} },
	shaSesamecareExtend:     func(s *spec) { s.dbFirst = true },
	shaSesamecareRelease:    func(s *spec) { s.dbFirst = true },
}

// spinUnlock is RSpinLock's unlock: RLock's without the channel, the lease in
// ARGV[1] and the owner in ARGV[2].
func spinUnlock(s *spec) {
	s.channel, s.message, s.ttl, s.owner = pos{}, pos{}, arg(1), arg(2)
}

// specFor is the spec of a known script: its kind's layout, with the
// differences of its version.
func specFor(sha string, kind scriptKind) *spec {
	s := layouts[kind]
	s.kind = kind
	if f := versionSpecs[sha]; f != nil {
		f(&s)
	}
	return &s
}

// book is every known script's spec by SHA1: EVALSHA works for them on a
// fresh replica without a NOSCRIPT round trip.
var book = func() map[string]*spec {
	m := map[string]*spec{}
	for _, f := range scriptFacts {
		m[f.sha] = specFor(f.sha, f.kind)
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

// scriptRegistry resolves script texts and SHA1s to meanings. It is shared by
// all connections, like Redis's script cache.
type scriptRegistry struct {
	custom map[string]*spec // SHA1 -> operator-registered meaning; fixed after New

	mu     sync.RWMutex
	loaded map[string]map[string]*spec // tenant -> SHA1 -> spec, for texts seen via EVAL / SCRIPT LOAD
}

// maxLoadedScripts bounds each tenant's cache against clients that send
// endless variants; a tenant that fills it empties its own, no other's.
const maxLoadedScripts = 4096

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// recognise returns the spec of script text, remembering its SHA1.
func (r *scriptRegistry) recognise(tenant, text string) (sha string, sp *spec, ok bool) {
	sha = sha1Hex(text)
	if sp, ok = book[sha]; ok {
		return sha, sp, true
	}
	if sp, ok = r.custom[sha]; ok {
		return sha, sp, true
	}
	norm := normalizeScript(text)
	if row, ok := byNorm[sha1Hex(norm)]; ok {
		sp = book[row] // a copy of a known client's script: its layout
	} else if kind, ok := canonicalForms[norm]; ok {
		sp = specFor(sha, kind)
	} else {
		return sha, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded == nil {
		r.loaded = map[string]map[string]*spec{}
	}
	if len(r.loaded[tenant]) >= maxLoadedScripts {
		r.loaded[tenant] = nil
	}
	if r.loaded[tenant] == nil {
		r.loaded[tenant] = map[string]*spec{}
	}
	r.loaded[tenant][sha] = sp
	return sha, sp, true
}

// bySHA returns the spec of a script by SHA1 (any case).
func (r *scriptRegistry) bySHA(tenant, sha string) (*spec, bool) {
	sha = strings.ToLower(sha)
	if sp, ok := book[sha]; ok {
		return sp, true
	}
	if sp, ok := r.custom[sha]; ok {
		return sp, true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	sp, ok := r.loaded[tenant][sha]
	return sp, ok
}

// flush forgets the scripts one tenant loaded (SCRIPT FLUSH).
func (r *scriptRegistry) flush(tenant string) {
	r.mu.Lock()
	delete(r.loaded, tenant)
	r.mu.Unlock()
}
