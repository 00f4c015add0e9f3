package wake

import "sync/atomic"

// Client patterns are indexed by scope: the channels a subscriber may hear
// (its tenant's, in the proxy; all for scope ""). A message is matched, once whatever the number of
// backends that carried it, only against the patterns of the scopes its
// channel is in: one tenant's patterns cost nothing to another tenant's
// messages. Each scope matches in its own goroutine, off the receive loops
// and outside the bus lock, so neither channel subscribers (the proxy's
// waiters) nor another scope's patterns wait behind it; its queue is
// bounded, and a message it has no room for is dropped for that scope and
// counted (Dropped), as Redis drops a pub/sub client that falls behind.

// Scoped is a Subscriber that only hears some channels: Scope names its
// scope (subscribers of one name share it) and tells the channels in it.
// One that is not Scoped is in scope "" (every channel).
type Scoped interface {
	Scope() (name string, in func(channel string) bool)
}

// scopeQueue bounds the messages waiting for one scope's matcher.
const scopeQueue = 32

// scope is the patterns of the subscribers of one scope.
type scope struct {
	prefix string
	in     func(channel string) bool
	pats   map[string]map[Subscriber]struct{} // guarded by the bus's mu
	snap   atomic.Pointer[[]patEntry]         // what the matcher reads: rebuilt on every change
	queue  chan [2]string                     // channel, message
	quit   chan struct{}                      // closed when the scope has no pattern left
	bus    *Bus
}

type patEntry struct {
	pattern string
	subs    []Subscriber
}

func scopeOf(s Subscriber) (string, func(string) bool) {
	if sc, ok := s.(Scoped); ok {
		return sc.Scope()
	}
	return "", func(string) bool { return true }
}

// indexPattern adds s's pattern to its scope; the caller holds b.mu.
func (b *Bus) indexPattern(s Subscriber, pattern string) {
	prefix, in := scopeOf(s)
	sc := b.scopes[prefix]
	if sc == nil {
		sc = &scope{prefix: prefix, in: in, pats: map[string]map[Subscriber]struct{}{}, bus: b,
			queue: make(chan [2]string, scopeQueue), quit: make(chan struct{})}
		b.scopes[prefix] = sc
		if len(b.backends) > 0 {
			go sc.run()
		}
	}
	if sc.pats[pattern] == nil {
		sc.pats[pattern] = map[Subscriber]struct{}{}
	}
	sc.pats[pattern][s] = struct{}{}
	sc.rebuild()
}

// unindexPattern takes s's pattern out of its scope; the caller holds b.mu.
func (b *Bus) unindexPattern(s Subscriber, pattern string) {
	prefix, _ := scopeOf(s)
	sc := b.scopes[prefix]
	if _, ok := sc.lookup(pattern, s); !ok { // its scope changed since (a new AUTH)
		for _, other := range b.scopes {
			if _, ok := other.pats[pattern][s]; ok {
				sc = other
			}
		}
	}
	if sc == nil {
		return
	}
	delete(sc.pats[pattern], s)
	if len(sc.pats[pattern]) == 0 {
		delete(sc.pats, pattern)
	}
	if len(sc.pats) == 0 {
		delete(b.scopes, sc.prefix)
		close(sc.quit)
		return
	}
	sc.rebuild()
}

func (sc *scope) lookup(pattern string, s Subscriber) (struct{}, bool) {
	if sc == nil {
		return struct{}{}, false
	}
	v, ok := sc.pats[pattern][s]
	return v, ok
}

func (sc *scope) rebuild() {
	entries := make([]patEntry, 0, len(sc.pats))
	for p, subs := range sc.pats {
		e := patEntry{pattern: p, subs: make([]Subscriber, 0, len(subs))}
		for s := range subs {
			e.subs = append(e.subs, s)
		}
		entries = append(entries, e)
	}
	sc.snap.Store(&entries)
}

// scopesOf lists the scopes channel is in; the caller holds b.mu.
func (b *Bus) scopesOf(channel string) []*scope {
	var in []*scope
	for _, sc := range b.scopes {
		if sc.in(channel) {
			in = append(in, sc)
		}
	}
	return in
}

// routePatterns queues a message for the matcher of every scope its
// channel is in, never waiting.
func (b *Bus) routePatterns(channel, message string) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, sc := range b.scopesOf(channel) {
		select {
		case sc.queue <- [2]string{channel, message}:
		default:
			b.dropped.Add(1)
		}
	}
}

// Dropped counts the pattern messages a scope's matcher had no room for.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// run matches the scope's queued messages until the scope empties or the
// bus closes.
func (sc *scope) run() {
	for {
		select {
		case m := <-sc.queue:
			sc.match(m[0], m[1])
		case <-sc.quit:
			return
		case <-sc.bus.closed:
			return
		}
	}
}

// match hands a message to the subscribers of every pattern of the scope
// that matches channel; it returns how many.
func (sc *scope) match(channel, message string) int {
	entries := sc.snap.Load()
	if entries == nil {
		return 0
	}
	n := 0
	for _, e := range *entries {
		if Match(e.pattern, channel) {
			for _, s := range e.subs {
				s.Deliver(e.pattern, channel, message)
			}
			n += len(e.subs)
		}
	}
	return n
}
