package proxy

import (
	"fmt"
	"sort"
	"sync"

	"github.com/redlock-proxy/redlock-proxy/wake"
)

// pubSub is the pub/sub family: SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE,
// PUNSUBSCRIBE and PUBLISH, carried between replicas by the wake bus. It
// owns every connection's subscriptions (a subscriber per subscribed
// connection); the core knows only how many a connection has
// (client.subscribed: RESP2's subscribed mode, and the idle timeout spares
// it), as Redis's core knows a client's pub/sub flag.
type pubSub struct {
	bus    *wake.Bus
	opts   *options
	quotas *quotas // each user's patterns

	mu   sync.Mutex
	subs map[*client]*subscriber
}

// Pub/sub limits per connection: what one client may make the proxy keep
// and match for it.
const (
	maxChannelLen = 1024 // bytes of a channel name (SUBSCRIBE, PUBLISH)
	maxPatternLen = 256  // bytes of a pattern (PSUBSCRIBE)
)

// of is c's subscriber, made on its first subscription (create); nil before.
func (p *pubSub) of(c *client, create bool) *subscriber {
	p.mu.Lock()
	defer p.mu.Unlock()
	sub := p.subs[c]
	if sub == nil && create {
		sub = &subscriber{c: c, channels: map[string]bool{}, patterns: map[string]bool{}, pushes: make(chan push, maxPendingPushes)}
		if p.subs == nil {
			p.subs = map[*client]*subscriber{}
		}
		p.subs[c] = sub
		go sub.writePushes(p.opts.WriteTimeout)
	}
	return sub
}

// cmdSubscribe: SUBSCRIBE / PSUBSCRIBE channel|pattern ...
func (s *pubSub) cmdSubscribe(c *request, args [][]byte) {
	pattern := equalFold(args[0], "psubscribe")
	kind := "subscribe"
	if pattern {
		kind = "psubscribe"
	}
	m := s.of(c.conn, false).set(pattern)
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
		case !m[string(a)] && !fresh[string(a)]:
			fresh[string(a)] = true
			added++
			addedBytes += len(a)
		}
	}
	if most := s.opts.MaxSubscriptions; most > 0 && int(c.conn.subscribed.Load())+added > most {
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
	sub := s.of(c.conn, true)
	prefix := c.prefix()
	sub.prefix.Store(&prefix)
	m = sub.set(pattern)
	for _, a := range args[1:] {
		name := string(a)
		if !m[name] {
			m[name] = true
			if pattern {
				if sub.charged == nil {
					sub.charged = map[string]string{}
				}
				sub.charged[name] = "user:" + user
				s.bus.PSubscribe(c.ctx, sub, name)
			} else {
				s.bus.Subscribe(c.ctx, sub, name)
			}
		}
		writeSubscription(c, kind, name, sub.count())
	}
}

// writeSubscription confirms one (un)subscription with the count left.
func writeSubscription(c *request, kind, name string, left int) {
	c.conn.pushHeader(c.wr, 3)
	c.wr.WriteBulkString(kind)
	c.wr.WriteBulkString(name)
	c.wr.WriteInt(left)
}

// cmdUnsubscribe: UNSUBSCRIBE / PUNSUBSCRIBE [channel|pattern ...]; with
// none, all of them.
func (s *pubSub) cmdUnsubscribe(c *request, args [][]byte) {
	pattern := equalFold(args[0], "punsubscribe")
	kind := "unsubscribe"
	if pattern {
		kind = "punsubscribe"
	}
	sub := s.of(c.conn, false)
	m := sub.set(pattern)
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
		c.wr.WriteInt(int(c.conn.subscribed.Load()))
		return
	}
	for _, name := range names {
		if m[name] {
			delete(m, name)
			if pattern {
				s.uncharge(sub, name)
				s.bus.PUnsubscribe(sub, name)
			} else {
				s.bus.Unsubscribe(sub, name)
			}
		}
		left := 0
		if sub != nil {
			left = sub.count()
		}
		writeSubscription(c, kind, name, left)
	}
}

// connClosed drops a closed connection's subscriptions.
func (s *pubSub) connClosed(c *client) {
	if sub := s.of(c, false); sub != nil {
		s.unsubscribeAll(sub)
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}
}

// connReset: RESET leaves every subscription; the connection stays.
func (s *pubSub) connReset(c *client) {
	if sub := s.of(c, false); sub != nil {
		s.unsubscribeAll(sub)
		clear(sub.channels)
		clear(sub.patterns)
		sub.count()
	}
}

// userChanged: a subscribed connection's deliveries follow its new tenant.
func (s *pubSub) userChanged(c *client) {
	if sub := s.of(c, false); sub != nil {
		p := c.prefix()
		sub.prefix.Store(&p)
	}
}

// unsubscribeAll takes sub off the bus.
func (s *pubSub) unsubscribeAll(sub *subscriber) {
	for name := range sub.channels {
		s.bus.Unsubscribe(sub, name)
	}
	for name := range sub.patterns {
		s.uncharge(sub, name)
		s.bus.PUnsubscribe(sub, name)
	}
}

// uncharge gives a pattern back to the budget of the user it was charged to.
func (s *pubSub) uncharge(sub *subscriber, pattern string) {
	if user, ok := sub.charged[pattern]; ok {
		delete(sub.charged, pattern)
		s.quotas.give(user, quotaUse{qPatterns: 1, qPatternBytes: len(pattern)})
	}
}

// cmdPublish: PUBLISH channel message, carried to every replica's
// subscribers through the backends. It answers how many replica listeners
// (channel or pattern) a backend counted, not how many clients: replicas do
// not count their clients for each other.
func (s *pubSub) cmdPublish(c *request, args [][]byte) {
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

// subscribeChannels are the channels or patterns SUBSCRIBE and PSUBSCRIBE
// name, publishChannel PUBLISH's.
func subscribeChannels(args [][]byte) [][]byte { return args[1:] }

func publishChannel(args [][]byte) [][]byte { return args[1:min(2, len(args))] }
