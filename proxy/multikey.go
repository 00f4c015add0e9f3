package proxy

import (
	"errors"
	"sync"
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
func (s *scriptService) allKeys(c *request, kind multiOp, keys [][]byte, value string, ttl time.Duration) {
	if kind == multiExtend && !s.holdsAll(c, keys, value) {
		return
	}
	var (
		done   []string
		grants []quorum.Grant // the acquires taken, to roll back
	)
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
			c.track(kindAcquire, start, g, err)
		case multiExtend:
			g, err = s.native.extendLock(c, key, value, ttl)
			c.track(kindExtend, start, g, err)
		case multiRelease:
			err = s.native.releaseLock(c.ctx, key, value)
			s.metrics.observe(kindRelease, start, err, 0)
			if errors.Is(err, quorum.ErrNotHeld) {
				continue
			}
		}
		if err != nil {
			if kind == multiAcquire {
				revokeAll(grants)
			}
			if errors.Is(err, quorum.ErrTaken) || errors.Is(err, quorum.ErrNotHeld) {
				c.wr.WriteInt(0)
				return
			}
			c.writeErr(err)
			return
		}
		done, grants = append(done, key), append(grants, g)
	}
	if kind == multiAcquire && ttl-time.Since(c.arrived) <= s.engine.MinValidity() {
		revokeAll(grants)
		c.writeErr(respError("NOQUORUM the keys were acquired one by one, but that took longer than the lock's TTL allows; released"))
		return
	}
	c.wr.WriteInt(len(done))
}

// revokeAll rolls back the keys an unfinished multi-key acquire took: each
// grant's round is undone (undo.lua), which deletes only what that round
// wrote and leaves a lock an extend from another connection pinned
// meanwhile to the window that extend answered 1 for. A release by value
// here would take such a lock from under the extend's caller.
func revokeAll(grants []quorum.Grant) {
	for _, g := range grants {
		g.Revoke()
	}
}

// holdsAll reads every key before a multi-key extend and answers 0 when one
// is not held by value: an extend changes nothing then, as node-redlock's
// script on one Redis, and pins no promise (PinKey) on the keys before it
// that would keep them past their holder's close. It tells whether the
// extend may go on (false: the reply is written).
func (s *scriptService) holdsAll(c *request, keys [][]byte, value string) bool {
	// The reads run side by side (at most 16 at once): a node-redlock
	// extend of many keys pays about one read's latency, not one per key.
	// The first key in order that fails or is not held answers.
	entries, errs := make([]quorum.Entry, len(keys)), make([]error, len(keys))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for i, k := range keys {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			entries[i], errs[i] = s.engine.Get(c.ctx, string(k))
		})
	}
	wg.Wait()
	for i, e := range entries {
		if errs[i] != nil {
			c.writeErr(errs[i])
			return false
		}
		if !e.Found || e.Value != value {
			c.wr.WriteInt(0)
			return false
		}
	}
	return true
}
