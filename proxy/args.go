package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"math"
	"strconv"
	"time"
)

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
