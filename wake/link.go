package wake

import (
	"context"
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
