package wake

import (
	"context"
	"strings"
	"time"
)

// Link is the bus's connection to one backend: PUBLISH, and one
// subscription connection that renews its subscriptions whenever it
// reconnects. backend.PubSub implements it over go-redis; every call that
// can block takes a ctx.
type Link interface {
	// Addr names the backend in logs.
	Addr() string
	// Publish sends payload on channel and returns how many listeners the
	// backend counted.
	Publish(ctx context.Context, channel, payload string) (int64, error)
	Subscribe(ctx context.Context, channel string) error
	PSubscribe(ctx context.Context, pattern string) error
	Unsubscribe(ctx context.Context, channel string) error
	PUnsubscribe(ctx context.Context, pattern string) error
	// Receive waits for the next message or subscription confirmation.
	Receive(ctx context.Context) (Event, error)
	Close() error
}

// EventKind tells a message from a confirmation.
type EventKind uint8

// The events a Link receives.
const (
	Message     EventKind = iota + 1 // Payload on Channel, matched by Pattern when not ""
	Subscribed                       // the backend listens on Channel
	PSubscribed                      // the backend listens on the pattern Channel
)

// Event is one thing a backend told a Link.
type Event struct {
	Kind             EventKind
	Channel, Pattern string
	Payload          string
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
			b.deliverPatterns(id, channel, message) // the catch-all: match the clients' patterns here
		}
	}
}
