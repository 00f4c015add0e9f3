package proxy

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// maxPendingPushes is how many messages may wait for a slow subscriber
// before its connection is closed (Redis's pubsub output buffer limit).
const maxPendingPushes = 1024

// push is one message on its way to a subscriber.
type push struct{ pattern, channel, message string }

// subscriber is one connection's pub/sub state, the wake.Subscriber the bus
// delivers to; channels and patterns are touched only by the connection's
// goroutine.
type subscriber struct {
	c        *client
	channels map[string]bool
	patterns map[string]bool
	pushes   chan push
	prefix   atomic.Pointer[string] // the tenant whose channels are delivered (read by the bus)
	charged  map[string]string      // pattern -> the user whose budget it draws on
}

// set is sub's channels, or its patterns; nil before the connection's
// first subscription (sub nil).
func (sub *subscriber) set(pattern bool) map[string]bool {
	switch {
	case sub == nil:
		return nil
	case pattern:
		return sub.patterns
	}
	return sub.channels
}

// count is how many channels and patterns sub listens to, and tells the
// core.
func (sub *subscriber) count() int {
	n := len(sub.channels) + len(sub.patterns)
	sub.c.subscribed.Store(int32(n))
	return n
}

// Deliver implements wake.Subscriber: queue, never block; a subscriber
// that fell maxPendingPushes behind loses its connection.
func (sub *subscriber) Deliver(pattern, channel, message string) {
	if reserved([]byte(channel)) {
		return // the proxy's own (a waiter's wake-up), matched by a pattern
	}
	if p := sub.prefix.Load(); p != nil && !owns(*p, []byte(channel)) {
		return // another tenant's channel, matched by a pattern
	}
	select {
	case sub.pushes <- push{pattern, channel, message}:
	default:
		sub.c.s.opts.logger.Warn("subscriber too slow; closed its connection", "client", sub.c.id)
		_ = sub.c.nc.Close()
	}
}

// writePushes writes queued messages between the connection's own batches.
func (sub *subscriber) writePushes(timeout time.Duration) {
	c := sub.c
	w := redcon.NewWriter(c.nc)
	for {
		select {
		case <-c.ctx.Done():
			return
		case p := <-sub.pushes:
			c.pushMu.Lock() // between batches: proto is settled
			c.pushMessage(w, p)
			for len(sub.pushes) > 0 && len(w.Buffer()) < 64<<10 {
				p = <-sub.pushes
				c.pushMessage(w, p)
			}
			_ = c.nc.SetWriteDeadline(time.Now().Add(timeout))
			err := w.Flush()
			c.pushMu.Unlock()
			if err != nil {
				_ = c.nc.Close() // a subscriber that stopped reading
				return
			}
		}
	}
}

func (c *client) pushMessage(w *redcon.Writer, p push) {
	if p.pattern == "" {
		c.pushHeader(w, 3)
		w.WriteBulkString("message")
	} else {
		c.pushHeader(w, 4)
		w.WriteBulkString("pmessage")
		w.WriteBulkString(p.pattern)
	}
	w.WriteBulkString(p.channel)
	w.WriteBulkString(p.message)
}

// pushHeader starts a push: an array in RESP2, a push type in RESP3.
func (c *client) pushHeader(w *redcon.Writer, n int) {
	if c.proto == 3 {
		w.WriteRaw([]byte(">" + strconv.Itoa(n) + "\r\n"))
		return
	}
	w.WriteArray(n)
}

// Scope implements wake.Scoped: the bus matches this connection's patterns
// only against its tenant's channels.
func (sub *subscriber) Scope() (string, func(channel string) bool) {
	prefix := ""
	if p := sub.prefix.Load(); p != nil {
		prefix = *p
	}
	return prefix, func(channel string) bool { return owns(prefix, []byte(channel)) }
}
