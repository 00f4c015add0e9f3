package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"math"
	"strconv"
	"time"
)

// setArgs is a parsed SET command.
type setArgs struct {
	Key, Value   string
	IfEq         string // with HasIfEq: IFEQ's comparison value (Redis 8.4)
	HasIfEq      bool
	NX, XX       bool
	KeepTTL, Get bool
	TTL          time.Duration // relative; valid when HasTTL
	HasTTL       bool
	expireOpt    string // which expiry option was given
}

// parseSet reads SET key value [NX|XX|IFEQ cmp] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL],
// options in any order and case, with Redis's own error texts. now resolves
// EXAT/PXAT to a relative TTL.
func parseSet(args [][]byte, now time.Time) (setArgs, error) {
	if len(args) < 2 {
		return setArgs{}, errWrongArity("set")
	}
	s := setArgs{Key: string(args[0]), Value: string(args[1])}
	for i := 2; i < len(args); i++ {
		opt := args[i]
		switch {
		case equalFold(opt, "nx") && !s.XX && !s.HasIfEq:
			s.NX = true
		case equalFold(opt, "xx") && !s.NX && !s.HasIfEq:
			s.XX = true
		case equalFold(opt, "ifeq") && !s.NX && !s.XX && !s.HasIfEq && i+1 < len(args):
			s.IfEq, s.HasIfEq = string(args[i+1]), true
			i++
		case equalFold(opt, "get"):
			s.Get = true
		case equalFold(opt, "keepttl") && s.expireOpt == "":
			s.KeepTTL, s.expireOpt = true, "keepttl"
		case s.expireOpt == "" && !s.KeepTTL && i+1 < len(args) && isExpireOpt(opt):
			ttl, err := expireTTL(opt, args[i+1], now)
			if err != nil {
				return setArgs{}, err
			}
			s.TTL, s.HasTTL, s.expireOpt = ttl, true, string(opt)
			i++
		default:
			return setArgs{}, errSyntax
		}
	}
	return s, nil
}

func isExpireOpt(b []byte) bool {
	return equalFold(b, "ex") || equalFold(b, "px") || equalFold(b, "exat") || equalFold(b, "pxat")
}

// expireTTL turns one expiry option into a relative TTL the way Redis 7
// validates it: not an integer -> errNotInteger; not positive, overflowing,
// or already in the past -> invalid expire time.
func expireTTL(opt, arg []byte, now time.Time) (time.Duration, error) {
	n, err := strconv.ParseInt(string(arg), 10, 64)
	if err != nil {
		return 0, errNotInteger
	}
	if n <= 0 {
		return 0, errInvalidExpire("set")
	}
	var ms int64
	switch {
	case equalFold(opt, "ex"), equalFold(opt, "exat"):
		if n > math.MaxInt64/1000 {
			return 0, errInvalidExpire("set")
		}
		ms = n * 1000
	default:
		ms = n
	}
	if equalFold(opt, "exat") || equalFold(opt, "pxat") {
		ms -= now.UnixMilli()
		if ms <= 0 {
			return 0, errInvalidExpire("set")
		}
	}
	return millis(ms, "set", now)
}

// millis is a positive TTL in ms as a Duration. One that Redis accepts but
// no Duration holds (beyond ~292 years) is ttlBeyond, refused as over
// max_ttl; one that overflows Redis's own clock is an invalid expire time.
func millis(ms int64, cmd string, now time.Time) (time.Duration, error) {
	switch {
	case ms > math.MaxInt64-now.UnixMilli():
		return 0, errInvalidExpire(cmd)
	case ms > math.MaxInt64/int64(time.Millisecond):
		return 0, ttlBeyond(ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// parseMillis reads a TTL argument in ms; anything but a positive integer
// that fits a time.Duration gets Redis's "invalid expire time in '<cmd>'
// command", as a script's own SET or PEXPIRE would.
func parseMillis(arg []byte, cmd string) (time.Duration, error) {
	ms, err := strconv.ParseInt(string(arg), 10, 64)
	if err != nil || ms <= 0 {
		return 0, errInvalidExpire(cmd)
	}
	return millis(ms, cmd, time.Now())
}

// splitScriptArgs splits EVAL's numkeys key... arg... as Redis does.
func splitScriptArgs(rest [][]byte) (keys, argv [][]byte, err error) {
	numKeys, perr := strconv.Atoi(string(rest[0]))
	switch {
	case perr != nil:
		return nil, nil, errNotInteger
	case numKeys < 0:
		return nil, nil, respError("ERR Number of keys can't be negative")
	case numKeys > len(rest)-1:
		return nil, nil, respError("ERR Number of keys can't be greater than number of args")
	}
	return rest[1 : 1+numKeys], rest[1+numKeys:], nil
}

// operands are a lock script's arguments, typed, taken from where its
// spec (proxy/scriptbook) says they are.
type operands struct {
	key, owner       string
	ttl              time.Duration // the TTL or lease
	token            string        // Redisson RFencedLock's token counter key
	channel, message string        // what to publish on a release, and where
	latch            string        // Redisson's unlock latch key, kept latchTTL
	latchTTL         time.Duration
	absentReleased   bool                  // Redisson 3.10.0-3.10.5: unlocking a missing lock answers 1
	rw               string                // Redisson's RReadWriteLock: "read" or "write"
	keyPairs         bool                  // the KEYS are pairs, a lock and a name of its
	queue            string                // Redisson RFairLock's queue of waiters (a key)
	wait             time.Duration         // how long its waiter keeps its place past its wait
	permit           scriptbook.PermitStep // a step of Redisson's RPermitExpirableSemaphore (permits.go)
	keys, argv       [][]byte              // all of them (after a database index), for the multi-key scripts
}
