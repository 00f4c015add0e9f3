package proxy

import (
	"errors"
	"strconv"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// bsm/redislock's scripts. Up to v0.9.4 they lock KEYS[1]; from v0.10 every
// one of KEYS at once, all or none. A lock's value is the caller's token
// followed by its metadata, ARGV[2] the token's length: obtain sets every
// key, or, when each one is held by a value starting with the same token,
// re-obtains them all with the caller's value (new metadata) and TTL. The
// other scripts need every key to hold the caller's whole value. Success is
// +OK (pttl: the shortest TTL), failure a nil reply, which is all the
// library reads: anything but nil is success.

// sharesToken is the library's test of a held value: its first n bytes
// equal value's (n is the token's length, as the library sends it). No
// token (n < 1) matches nothing.
func sharesToken(held, value string, n int) bool {
	return n >= 1 && held[:min(n, len(held))] == value[:min(n, len(value))]
}

// bsmObtain is the obtain script over keys: +OK when every key was
// acquired for value, or re-obtained; nil when any is held otherwise.
func (s *scriptService) bsmObtain(c *request, keys [][]byte, value string, tokenLen []byte, ttl time.Duration) {
	n, err := strconv.Atoi(string(tokenLen))
	if err != nil {
		c.writeErr(respError("ERR bsm/redislock obtain: ARGV[2] must be the token's length, a whole number"))
		return
	}
	var grants []quorum.Grant // the acquires taken, to roll back
	for _, k := range keys {
		start := time.Now()
		g, err := s.engine.Acquire(c.ctx, string(k), value, ttl)
		c.track(kindAcquire, start, g, err)
		if errors.Is(err, quorum.ErrTaken) {
			revokeAll(grants)
			s.bsmReobtain(c, keys, value, n, ttl)
			return
		}
		if err != nil {
			revokeAll(grants)
			c.writeErr(err)
			return
		}
		grants = append(grants, g)
	}
	if len(keys) > 1 && ttl-time.Since(c.arrived) <= s.engine.MinValidity() {
		revokeAll(grants)
		c.writeErr(respError("NOQUORUM the keys were acquired one by one, but that took longer than the lock's TTL allows; released"))
		return
	}
	c.wr.WriteString("OK")
}

// bsmReobtain re-obtains keys that are all held by values sharing value's
// token: each is extended for the value it holds (which proves it still
// holds it on a quorum, for ttl), and only then is each overwritten with
// value where it still holds that value. Any key held otherwise, or lost
// meanwhile, answers nil, and the keys already overwritten get back the
// value they held: all or none, as Redis's one script.
func (s *scriptService) bsmReobtain(c *request, keys [][]byte, value string, n int, ttl time.Duration) {
	held, ok := s.heldBy(c, keys, func(v string) bool { return sharesToken(v, value, n) })
	if !ok {
		return
	}
	failed := func(err error) {
		if errors.Is(err, quorum.ErrNotHeld) || errors.Is(err, quorum.ErrTaken) {
			c.writeNull()
			return
		}
		c.writeErr(err)
	}
	for i, k := range keys {
		start := time.Now()
		g, err := s.native.extendLock(c, string(k), held[i], ttl)
		c.track(kindExtend, start, g, err)
		if err != nil {
			failed(err)
			return
		}
	}
	for i, k := range keys {
		if held[i] == value {
			continue
		}
		// Only where it still holds held[i]: the key may have passed to
		// another owner since (Redis runs bsm's check and MSET as one
		// script; here they are rounds apart).
		start := time.Now()
		g, err := s.engine.OverwriteIfEq(c.ctx, string(k), held[i], value, ttl)
		c.track(kindExtend, start, g, err)
		if err != nil {
			for j := range i { // put back what this call replaced
				if held[j] != value {
					_, _ = s.engine.OverwriteIfEq(c.ctx, string(keys[j]), value, held[j], ttl)
				}
			}
			failed(err)
			return
		}
	}
	c.wr.WriteString("OK")
}

// heldBy reads every key and returns the values they hold when each one
// satisfies match; otherwise it writes the reply (nil, or the error).
func (s *scriptService) heldBy(c *request, keys [][]byte, match func(string) bool) ([]string, bool) {
	held := make([]string, len(keys))
	for i, k := range keys {
		start := time.Now()
		e, err := s.engine.Get(c.ctx, string(k))
		s.metrics.observe(kindRead, start, err, 0)
		switch {
		case err != nil:
			c.writeErr(err)
			return nil, false
		case !e.Found || e.Type != quorum.TypeString || !match(e.Value):
			c.writeNull()
			return nil, false
		}
		held[i] = e.Value
	}
	return held, true
}

// bsmRefresh extends every key value holds: +OK, or nil (nothing touched)
// when one is not held.
func (s *scriptService) bsmRefresh(c *request, keys [][]byte, value string, ttl time.Duration) {
	if _, ok := s.heldBy(c, keys, func(v string) bool { return v == value }); !ok {
		return
	}
	for _, k := range keys {
		start := time.Now()
		g, err := s.native.extendLock(c, string(k), value, ttl)
		c.track(kindExtend, start, g, err)
		if errors.Is(err, quorum.ErrNotHeld) {
			c.writeNull()
			return
		}
		if err != nil {
			c.writeErr(err)
			return
		}
	}
	c.wr.WriteString("OK")
}

// bsmRelease releases every key when value holds them all: +OK, or nil
// (nothing released) when one is not held.
func (s *scriptService) bsmRelease(c *request, keys [][]byte, value string) {
	if _, ok := s.heldBy(c, keys, func(v string) bool { return v == value }); !ok {
		return
	}
	for _, k := range keys {
		start := time.Now()
		err := s.native.releaseLock(c.ctx, string(k), value)
		s.metrics.observe(kindRelease, start, err, 0)
		if err != nil && !errors.Is(err, quorum.ErrNotHeld) { // not held any more: expired meanwhile, free either way
			c.writeErr(err)
			return
		}
	}
	c.wr.WriteString("OK")
}

// bsmPTTL answers the shortest remaining TTL in ms of keys all held by
// value (0 when none has a positive one), else nil.
func (s *scriptService) bsmPTTL(c *request, keys [][]byte, value string) {
	var least int64
	for _, k := range keys {
		start := time.Now()
		e, err := s.engine.Read(c.ctx, string(k))
		s.metrics.observe(kindRead, start, err, 0)
		switch {
		case err != nil:
			c.writeErr(err)
			return
		case !e.Found || e.Type != quorum.TypeString || e.Value != value:
			c.writeNull()
			return
		}
		if ms := e.TTL.Milliseconds(); ms > 0 && (least == 0 || ms < least) {
			least = ms
		}
	}
	c.wr.WriteInt64(least)
}
