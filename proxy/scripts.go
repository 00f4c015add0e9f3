package proxy

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"
)

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
	kind, ok := canonicalForms[normalizeScript(text)]
	if !ok {
		return sha, nil, false
	}
	sp = specFor(sha, kind)
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
