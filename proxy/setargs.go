package proxy

import (
	"math"
	"strconv"
	"time"
)

// SET's arguments, for the Redis-style locks (lockcmds.go) and the
// native service's bound locks.

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
