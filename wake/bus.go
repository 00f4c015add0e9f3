package wake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Prefix is put before every channel and pattern on the backends, so the
// proxy's messages never mix with anything else published there.
const Prefix = "__redlock-proxy:wake:"

// Subscriber is one client connection listening. Deliver must not block;
// pattern is "" for a channel subscription.
type Subscriber interface {
	Deliver(pattern, channel, message string)
}

// Bus is one replica's end of the wake-up channel. Safe for concurrent use.
type Bus struct {
	backends []Link
	quorum   int
	logger   *slog.Logger
	id       string // this replica's id, the first half of every message id
	seq      atomic.Uint64
	timeout  time.Duration

	opMu     sync.Mutex        // orders subscription changes with their backend calls
	mu       sync.RWMutex      // guards the maps
	channels map[string]*topic // channel -> subscribers
	patterns map[string]*topic // pattern -> subscribers

	catchAll *topic            // the one pattern the backends match for this replica, while patterns has any
	scopes   map[string]*scope // scope prefix -> its patterns and matcher (see patterns.go)
	dropped  atomic.Int64      // pattern messages a busy scope's matcher had no room for

	seenMu sync.Mutex
	seen   seenSet

	stop   context.CancelFunc // ends the receivers
	closed <-chan struct{}    // closed by Close: ends the scopes' matchers
}

// topic is the local subscribers of one channel or pattern; ready closes
// once the backends confirmed the subscription (or gave up trying).
type topic struct {
	subs  map[Subscriber]struct{}
	ready chan struct{}
	acks  atomic.Int32
}

// New returns a bus over links (one per backend, owned by the bus from
// then on); with none, messages reach this replica's subscribers only.
// timeout bounds each backend call.
func New(links []Link, timeout time.Duration, logger *slog.Logger) *Bus {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	ctx, stop := context.WithCancel(context.Background())
	b := &Bus{backends: links, quorum: len(links)/2 + 1, logger: logger, id: hex.EncodeToString(raw[:]), timeout: timeout,
		channels: map[string]*topic{}, patterns: map[string]*topic{}, scopes: map[string]*scope{}, stop: stop, closed: ctx.Done()}
	for _, l := range links {
		go b.receive(ctx, l)
	}
	return b
}

// Close stops listening and closes the links.
func (b *Bus) Close() {
	b.stop()
	for _, l := range b.backends {
		_ = l.Close()
	}
}

// Subscribe adds s to channel, and returns once the backends listen for it
// (a quorum of them), after the timeout, or when ctx ends, whichever is first.
func (b *Bus) Subscribe(ctx context.Context, s Subscriber, channel string) {
	b.add(ctx, s, channel, false)
}

// PSubscribe adds s to the channels matching pattern (Redis glob).
func (b *Bus) PSubscribe(ctx context.Context, s Subscriber, pattern string) {
	b.add(ctx, s, pattern, true)
}

// Unsubscribe removes s from channel.
func (b *Bus) Unsubscribe(s Subscriber, channel string) { b.remove(s, channel, false) }

// PUnsubscribe removes s from pattern.
func (b *Bus) PUnsubscribe(s Subscriber, pattern string) { b.remove(s, pattern, true) }

func (b *Bus) topics(pattern bool) map[string]*topic {
	if pattern {
		return b.patterns
	}
	return b.channels
}

func (b *Bus) add(ctx context.Context, s Subscriber, name string, pattern bool) {
	b.opMu.Lock()
	b.mu.Lock()
	m := b.topics(pattern)
	t := m[name]
	if t == nil {
		t = &topic{subs: map[Subscriber]struct{}{}, ready: make(chan struct{})}
		m[name] = t
		close(t.ready) // a pattern is matched here; a channel's readiness is its own backend subscription
	}
	t.subs[s] = struct{}{}
	if pattern {
		b.indexPattern(s, name)
	}
	wait := t.ready
	switch {
	case len(b.backends) == 0:
	case !pattern && len(t.subs) == 1:
		t.ready = make(chan struct{})
		wait = t.ready
	case pattern && b.catchAll == nil:
		b.catchAll = &topic{ready: make(chan struct{})}
		wait = b.catchAll.ready
	case pattern:
		wait = b.catchAll.ready
	}
	b.mu.Unlock()
	switch {
	case len(b.backends) == 0:
	case !pattern && len(t.subs) == 1:
		b.listen(name, false)
	case pattern && len(b.patterns) == 1 && len(t.subs) == 1:
		b.listen("*", true)
	}
	b.opMu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
	case <-time.After(b.timeout):
	}
}

// listen subscribes every backend to name; receive closes the topic's
// ready once a quorum confirmed. a Link remembers the subscription and
// renews it whenever it reconnects, also for a backend that is down now.
func (b *Bus) listen(name string, pattern bool) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	for _, l := range b.backends {
		var err error
		if pattern {
			err = l.PSubscribe(ctx, Prefix+name)
		} else {
			err = l.Subscribe(ctx, Prefix+name)
		}
		if err != nil {
			b.logger.Debug("wake-up subscription not sent yet; renewed on reconnect", "backend", l.Addr(), "err", err)
		}
	}
}

// confirmed counts a backend's confirmation of a subscription: of a
// channel, or of the catch-all pattern.
func (b *Bus) confirmed(name string, pattern bool) {
	b.mu.RLock()
	t := b.channels[name]
	if pattern {
		t = b.catchAll
	}
	b.mu.RUnlock()
	if t != nil && int(t.acks.Add(1)) == b.quorum {
		close(t.ready)
	}
}

func (b *Bus) remove(s Subscriber, name string, pattern bool) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	b.mu.Lock()
	m := b.topics(pattern)
	t := m[name]
	if t == nil {
		b.mu.Unlock()
		return
	}
	if _, ok := t.subs[s]; ok && pattern {
		b.unindexPattern(s, name)
	}
	delete(t.subs, s)
	last := len(t.subs) == 0
	if last {
		delete(m, name)
	}
	lastPattern := pattern && last && len(b.patterns) == 0
	if lastPattern {
		b.catchAll = nil
	}
	b.mu.Unlock()
	if !last || pattern && !lastPattern {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	for _, l := range b.backends {
		if pattern {
			_ = l.PUnsubscribe(ctx, Prefix+"*")
		} else {
			_ = l.Unsubscribe(ctx, Prefix+name)
		}
	}
}

// Publish sends message to channel's subscribers on every replica and
// returns how many replica listeners (channel or pattern) the busiest
// backend counted, or, with no backends, how many local subscribers got it.
// ctx bounds the wait.
func (b *Bus) Publish(ctx context.Context, channel, message string) (int64, error) {
	if len(b.backends) == 0 {
		return int64(b.deliver(fmt.Sprint(b.seq.Add(1)), channel, message, true)), nil
	}
	payload := fmt.Sprintf("%s%016x %s", b.id, b.seq.Add(1), message)
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	counts := make([]int64, len(b.backends))
	errs := make([]error, len(b.backends))
	var wg sync.WaitGroup
	for i, l := range b.backends {
		wg.Go(func() { counts[i], errs[i] = l.Publish(ctx, Prefix+channel, payload) })
	}
	wg.Wait()
	var most int64
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			continue
		}
		most = max(most, counts[i])
	}
	if failed == len(b.backends) {
		return 0, fmt.Errorf("no backend took the message: %w", errs[0])
	}
	return most, nil
}

// Notify publishes in the background: a release's reply does not wait for
// its wake-up.
func (b *Bus) Notify(channel, message string) {
	go func() {
		if _, err := b.Publish(context.Background(), channel, message); err != nil {
			b.logger.Warn("lock wake-up not published", "err", err)
		}
	}()
}

// deliver hands a message to the local subscribers of channel; with
// patterns (no backends: a local bus) it also matches the patterns there
// and then; it returns how many subscribers got it.
func (b *Bus) deliver(id, channel, message string, patterns bool) int {
	b.mu.RLock()
	n := 0
	if t := b.channels[channel]; t != nil && b.first(id, "") {
		for s := range t.subs {
			s.Deliver("", channel, message)
			n++
		}
	}
	var scopes []*scope
	if patterns {
		scopes = b.scopesOf(channel)
	}
	b.mu.RUnlock()
	for _, sc := range scopes {
		n += sc.match(channel, message)
	}
	return n
}

// receive reads one backend's events until ctx ends (the bus closed); the
// Link reconnects and resubscribes after errors.
func (b *Bus) receive(ctx context.Context, l Link) {
	for {
		ev, err := l.Receive(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		switch ev.Kind {
		case Subscribed, PSubscribed:
			b.confirmed(strings.TrimPrefix(ev.Channel, Prefix), ev.Kind == PSubscribed)
		case Message:
			id, message, ok := strings.Cut(ev.Payload, " ")
			if !ok || !strings.HasPrefix(ev.Channel, Prefix) {
				continue
			}
			channel := strings.TrimPrefix(ev.Channel, Prefix)
			if ev.Pattern == "" {
				b.deliver(id, channel, message, false)
				continue
			}
			if b.first(id, "\x00*") { // the catch-all: one copy per message, whichever backend brought it first
				b.routePatterns(channel, message)
			}
		}
	}
}

// first reports whether this is the first copy of message id for pattern
// ("" for channel subscribers).
func (b *Bus) first(id, pattern string) bool {
	b.seenMu.Lock()
	defer b.seenMu.Unlock()
	return b.seen.add(id+"\x00"+pattern, time.Now())
}
