package proxy

import (
	"errors"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// multiOp is what node-redlock's multi-resource script does to every key.
type multiOp uint8

const (
	multiAcquire multiOp = iota + 1
	multiExtend
	multiRelease
)

// allKeys runs node-redlock's multi-resource scripts, one quorum round per
// key: acquire takes every key or none (those taken by this call are
// released again when one is held elsewhere, and the whole call must leave
// the client more than the minimum validity); extend needs every key held;
// release counts the keys it freed.
func (s *Server) allKeys(c *request, kind multiOp, keys [][]byte, value string, ttl time.Duration) {
	var done []string
	for _, k := range keys {
		key := string(k)
		start := time.Now()
		var (
			g   quorum.Grant
			err error
		)
		switch kind {
		case multiAcquire:
			g, err = s.engine.Acquire(c.ctx, key, value, ttl)
			s.track(c, kindAcquire, start, g, err)
		case multiExtend:
			g, err = s.extendLock(c, key, value, ttl)
			s.track(c, kindExtend, start, g, err)
		case multiRelease:
			err = s.releaseLock(c.ctx, key, value)
			s.metrics.observe(kindRelease, start, err, 0)
			if errors.Is(err, quorum.ErrNotHeld) {
				continue
			}
		}
		if err != nil {
			if kind == multiAcquire {
				s.releaseAll(c, done, value)
			}
			if errors.Is(err, quorum.ErrTaken) || errors.Is(err, quorum.ErrNotHeld) {
				c.wr.WriteInt(0)
				return
			}
			c.writeErr(err)
			return
		}
		done = append(done, key)
	}
	if kind == multiAcquire && ttl-time.Since(c.arrived) <= s.engine.MinValidity() {
		s.releaseAll(c, done, value)
		c.writeErr(respError("NOQUORUM the keys were acquired one by one, but that took longer than the lock's TTL allows; released"))
		return
	}
	c.wr.WriteInt(len(done))
}

// releaseAll frees the keys an unfinished multi-key acquire took.
func (s *Server) releaseAll(c *request, keys []string, value string) {
	for _, k := range keys {
		_ = s.releaseLock(c.ctx, k, value)
	}
}
