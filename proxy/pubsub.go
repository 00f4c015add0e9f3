package proxy

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/tidwall/redcon"
)

func (c *client) subCount() int { return len(c.subs.channels) + len(c.subs.patterns) }

// Deliver implements wake.Subscriber: queue, never block; a subscriber
// that fell maxPendingPushes behind loses its connection.
func (c *client) Deliver(pattern, channel, message string) {
	if reserved([]byte(channel)) {
		return // the proxy's own (a waiter's wake-up), matched by a pattern
	}
	if p := c.subs.prefix.Load(); p != nil && !owns(*p, []byte(channel)) {
		return // another tenant's channel, matched by a pattern
	}
	select {
	case c.subs.pushes <- push{pattern, channel, message}:
	default:
		c.s.opts.logger.Warn("subscriber too slow; closed its connection", "client", c.id)
		_ = c.nc.Close()
	}
}

// writePushes writes queued messages between the connection's own batches.
func (c *client) writePushes() {
	w := redcon.NewWriter(c.nc)
	for {
		select {
		case <-c.ctx.Done():
			return
		case p := <-c.subs.pushes:
			c.pushMu.Lock() // between batches: proto is settled
			c.pushMessage(w, p)
			for len(c.subs.pushes) > 0 && len(w.Buffer()) < 64<<10 {
				p = <-c.subs.pushes
				c.pushMessage(w, p)
			}
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
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

// cmdSubscribe: SUBSCRIBE / PSUBSCRIBE channel|pattern ...
func (s *Server) cmdSubscribe(c *request, args [][]byte) {
	pattern := equalFold(args[0], "psubscribe")
	kind, m := "subscribe", &c.conn.subs.channels
	if pattern {
		kind, m = "psubscribe", &c.conn.subs.patterns
	}
	added, addedBytes, fresh := 0, 0, map[string]bool{}
	for _, a := range args[1:] {
		switch {
		case !pattern && len(a) > maxChannelLen:
			c.writeErr(respError(fmt.Sprintf("ERR channel name longer than %d bytes", maxChannelLen)))
			return
		case pattern && len(a) > maxPatternLen:
			c.writeErr(respError(fmt.Sprintf("ERR pattern longer than %d bytes", maxPatternLen)))
			return
		case !pattern && !c.owns(a):
			c.writeErr(errChannelPerm)
			return
		case !(*m)[string(a)] && !fresh[string(a)]:
			fresh[string(a)] = true
			added++
			addedBytes += len(a)
		}
	}
	if most := s.opts.MaxSubscriptions; most > 0 && c.conn.subCount()+added > most {
		c.writeErr(limitRefusal(fmt.Sprintf("ERR too many subscriptions on this connection (at most %d channels and patterns)", most)))
		return
	}
	user := c.userName()
	if pattern && !s.quotas.take("user:"+user, quotaUse{qPatterns: added, qPatternBytes: addedBytes},
		quotaUse{qPatterns: s.opts.MaxPatternsPerUser, qPatternBytes: s.opts.MaxPatternBytesPerUser}) {
		c.writeErr(limitRefusal(fmt.Sprintf("ERR too many patterns for user %s (at most %d patterns of %d bytes in all, max_patterns_per_user and max_pattern_bytes_per_user)",
			user, s.opts.MaxPatternsPerUser, s.opts.MaxPatternBytesPerUser)))
		return
	}
	prefix := c.prefix()
	c.conn.subs.prefix.Store(&prefix)
	if c.conn.subs.pushes == nil {
		c.conn.subs.pushes = make(chan push, maxPendingPushes)
		go c.conn.writePushes()
	}
	if *m == nil {
		*m = map[string]bool{}
	}
	for _, a := range args[1:] {
		name := string(a)
		if !(*m)[name] {
			(*m)[name] = true
			if pattern {
				if c.conn.subs.charged == nil {
					c.conn.subs.charged = map[string]string{}
				}
				c.conn.subs.charged[name] = "user:" + user
				s.bus.PSubscribe(c.ctx, c.conn, name)
			} else {
				s.bus.Subscribe(c.ctx, c.conn, name)
			}
		}
		c.writeSubscription(kind, name)
	}
}

// writeSubscription confirms one (un)subscription with the count left.
func (c *request) writeSubscription(kind, name string) {
	c.conn.pushHeader(c.wr, 3)
	c.wr.WriteBulkString(kind)
	c.wr.WriteBulkString(name)
	c.wr.WriteInt(c.conn.subCount())
}

// cmdUnsubscribe: UNSUBSCRIBE / PUNSUBSCRIBE [channel|pattern ...]; with
// none, all of them.
func (s *Server) cmdUnsubscribe(c *request, args [][]byte) {
	pattern := equalFold(args[0], "punsubscribe")
	kind, m := "unsubscribe", c.conn.subs.channels
	if pattern {
		kind, m = "punsubscribe", c.conn.subs.patterns
	}
	names := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		names = append(names, string(a))
	}
	if len(names) == 0 {
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		c.conn.pushHeader(c.wr, 3)
		c.wr.WriteBulkString(kind)
		c.writeNull()
		c.wr.WriteInt(c.conn.subCount())
		return
	}
	for _, name := range names {
		if m[name] {
			delete(m, name)
			if pattern {
				c.conn.uncharge(name)
				s.bus.PUnsubscribe(c.conn, name)
			} else {
				s.bus.Unsubscribe(c.conn, name)
			}
		}
		c.writeSubscription(kind, name)
	}
}

// unsubscribeAll drops the connection's subscriptions when it closes.
func (c *client) unsubscribeAll() {
	for name := range c.subs.channels {
		c.s.bus.Unsubscribe(c, name)
	}
	for name := range c.subs.patterns {
		c.uncharge(name)
		c.s.bus.PUnsubscribe(c, name)
	}
}

// uncharge gives a pattern back to the budget of the user it was charged to.
func (c *client) uncharge(pattern string) {
	if user, ok := c.subs.charged[pattern]; ok {
		delete(c.subs.charged, pattern)
		c.s.quotas.give(user, quotaUse{qPatterns: 1, qPatternBytes: len(pattern)})
	}
}

// Scope implements wake.Scoped: the bus matches this connection's patterns
// only against its tenant's channels.
func (c *client) Scope() (string, func(channel string) bool) {
	prefix := ""
	if p := c.subs.prefix.Load(); p != nil {
		prefix = *p
	}
	return prefix, func(channel string) bool { return owns(prefix, []byte(channel)) }
}

// cmdPublish: PUBLISH channel message, carried to every replica's
// subscribers through the backends. It answers how many replica listeners
// (channel or pattern) a backend counted, not how many clients: replicas do
// not count their clients for each other.
func (s *Server) cmdPublish(c *request, args [][]byte) {
	switch {
	case len(args[1]) > maxChannelLen:
		c.writeErr(respError(fmt.Sprintf("ERR channel name longer than %d bytes", maxChannelLen)))
		return
	case !c.owns(args[1]):
		c.writeErr(errChannelPerm)
		return
	}
	n, err := s.bus.Publish(c.ctx, string(args[1]), string(args[2]))
	if err != nil {
		c.writeErr(respError(fmt.Sprintf("ERR %v", err)))
		return
	}
	c.wr.WriteInt64(n)
}

// subscribedOnly is what a RESP2 connection may run while subscribed.
var subscribedOnly = map[string]bool{"subscribe": true, "psubscribe": true, "unsubscribe": true,
	"punsubscribe": true, "ping": true, "quit": true, "reset": true}
