package proxy

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"
)

// scriptKind is what a recognised script means as a lock operation.
type scriptKind uint8

const (
	scriptRelease                scriptKind = iota + 1 // KEYS[1], ARGV[1] owner: compare-and-delete, 1/0
	scriptExtend                                       // KEYS[1], ARGV[1] owner, ARGV[2] ms: compare-and-PEXPIRE, 1/0
	scriptExtendPy                                     // redis-py: ARGV[2] ms added to the TTL when ARGV[3] is "0", else replacing it; 1/0
	scriptReleaseMissing                               // redsync: as scriptRelease, but -1 when the key is missing
	scriptExtendOrAcquire                              // redsync touch with SetNX: extend, or acquire when the key is missing; 1/0
	scriptObtain                                       // bsm/redislock: ARGV[1] value, ARGV[3] ms: acquire (or re-obtain one\'s own); +OK or nil
	scriptOwnerPTTL                                    // bsm/redislock: the owner\'s PTTL in ms, else -3
	scriptAcquireAll                                   // node-redlock: every KEY for ARGV[1], ARGV[2] ms, or none; #KEYS or 0
	scriptExtendAll                                    // node-redlock: every KEY extended to ARGV[2] ms if all hold ARGV[1]; #KEYS or 0
	scriptReleaseAll                                   // node-redlock: KEYS holding ARGV[1] deleted; how many
	scriptAcquire                                      // registered scripts: KEYS[1] for ARGV[1], ARGV[2] ms; 1/0
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
		scriptSpringReleaseNotifyKey: "release and notify (true/false)", scriptSpringDeleteNotify: "delete and notify (true/false)"}[k]
}

// Scripts known by SHA1 only: an EVAL of them is recognised when its text
// hashes the same; EVALSHA works on a fresh replica either way. Each SHA1
// and argument layout was checked against the client's source text, in the
// versions named (issue 12); the texts themselves are not kept here.
var knownSHAsOnly = map[string]scriptKind{
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
}

// dbFirst lists scripts whose ARGV[1] is a database index they SELECT
// (@sesamecare-oss/redlock); their other arguments follow it.
var dbFirst = map[string]bool{
	sha1Hex(sesamecareAcquire): true,
	sha1Hex(sesamecareExtend):  true,
	sha1Hex(sesamecareRelease): true,
}

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
var canonicalForms = func() map[string]scriptKind {
	forms := map[string]scriptKind{}
	conds := []string{`redis.call("get",KEYS[1]) == ARGV[1]`, `ARGV[1] == redis.call("get",KEYS[1])`}
	actions := map[string]scriptKind{
		`redis.call("del",KEYS[1])`:             scriptRelease,
		`redis.call("unlink",KEYS[1])`:          scriptRelease,
		`redis.call("pexpire",KEYS[1],ARGV[2])`: scriptExtend,
	}
	for _, cond := range conds {
		for action, kind := range actions {
			forms[normalizeScript("if "+cond+" then return "+action+" else return 0 end")] = kind
			forms[normalizeScript("if "+cond+" then return "+action+" end return 0")] = kind
		}
	}
	return forms
}()

// scriptRegistry resolves script texts and SHA1s to meanings. It is shared by
// all connections, like Redis's script cache.
type scriptRegistry struct {
	custom map[string]registered // SHA1 -> operator-registered meaning; fixed after New

	mu     sync.RWMutex
	loaded map[string]map[string]scriptKind // tenant -> SHA1 -> kind, for texts seen via EVAL / SCRIPT LOAD
}

// maxLoadedScripts bounds each tenant's cache against clients that send
// endless variants; a tenant that fills it empties its own, no other's.
const maxLoadedScripts = 4096

var knownSHAs = func() map[string]scriptKind {
	m := map[string]scriptKind{}
	for text, kind := range knownTexts {
		m[sha1Hex(text)] = kind
	}
	for sha, kind := range knownSHAsOnly {
		m[sha] = kind
	}
	return m
}()

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// recognise returns the meaning of script text, remembering its SHA1.
func (r *scriptRegistry) recognise(tenant, text string) (sha string, kind scriptKind, ok bool) {
	sha = sha1Hex(text)
	if kind, ok = knownSHAs[sha]; ok {
		return sha, kind, true
	}
	if g, ok := r.custom[sha]; ok {
		return sha, g.kind, true
	}
	if kind, ok = canonicalForms[normalizeScript(text)]; !ok {
		return sha, 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded == nil {
		r.loaded = map[string]map[string]scriptKind{}
	}
	if len(r.loaded[tenant]) >= maxLoadedScripts {
		r.loaded[tenant] = nil
	}
	if r.loaded[tenant] == nil {
		r.loaded[tenant] = map[string]scriptKind{}
	}
	r.loaded[tenant][sha] = kind
	return sha, kind, true
}

// bySHA returns the meaning of a script by SHA1 (any case).
func (r *scriptRegistry) bySHA(tenant, sha string) (scriptKind, bool) {
	sha = strings.ToLower(sha)
	if kind, ok := knownSHAs[sha]; ok {
		return kind, true
	}
	if g, ok := r.custom[sha]; ok {
		return g.kind, true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	kind, ok := r.loaded[tenant][sha]
	return kind, ok
}

// flush forgets the SHA1s learnt from clients; the known ones stay.
// flush forgets the scripts one tenant loaded (SCRIPT FLUSH).
func (r *scriptRegistry) flush(tenant string) {
	r.mu.Lock()
	delete(r.loaded, tenant)
	r.mu.Unlock()
}

// normalizeScript reduces a Lua text to a form in which hand-typed variants
// of one script compare equal: comments and ';' dropped, whitespace kept only
// where it separates two words, every string literal double-quoted and
// lower-cased (in these scripts string literals are command names). Names
// outside strings keep their case: KEYS and keys differ in Lua.
func normalizeScript(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	space := false // whitespace seen since the last byte written
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			space = true
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j, len(src))
			b.WriteByte('"')
			b.WriteString(strings.ToLower(src[i+1 : end]))
			b.WriteByte('"')
			i, space = end, false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			space = true
		case c == ';':
			space = true
		default:
			if space && b.Len() > 0 && isWordByte(lastByte(&b)) && isWordByte(c) {
				b.WriteByte(' ')
			}
			b.WriteByte(c)
			space = false
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func lastByte(b *strings.Builder) byte {
	s := b.String()
	return s[len(s)-1]
}
