package backend

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/wake"
)

// PubSub is a wake.Link over go-redis: a small client for PUBLISH and one
// subscription connection, whose subscriptions go-redis remembers and
// renews whenever it reconnects (also to a backend that is down now).
type PubSub struct {
	client *redis.Client
	ps     *redis.PubSub
}

// NewPubSub connects to one backend for the wake-up bus.
func NewPubSub(opt *redis.Options) *PubSub {
	c := redis.NewClient(opt)
	return &PubSub{client: c, ps: c.Subscribe(context.Background())}
}

// Addr implements wake.Link.
func (p *PubSub) Addr() string { return p.client.Options().Addr }

// Publish implements wake.Link.
func (p *PubSub) Publish(ctx context.Context, channel, payload string) (int64, error) {
	return p.client.Publish(ctx, channel, payload).Result()
}

// Subscribe implements wake.Link.
func (p *PubSub) Subscribe(ctx context.Context, channel string) error {
	return p.ps.Subscribe(ctx, channel)
}

// PSubscribe implements wake.Link.
func (p *PubSub) PSubscribe(ctx context.Context, pattern string) error {
	return p.ps.PSubscribe(ctx, pattern)
}

// Unsubscribe implements wake.Link.
func (p *PubSub) Unsubscribe(ctx context.Context, channel string) error {
	return p.ps.Unsubscribe(ctx, channel)
}

// PUnsubscribe implements wake.Link.
func (p *PubSub) PUnsubscribe(ctx context.Context, pattern string) error {
	return p.ps.PUnsubscribe(ctx, pattern)
}

// Receive implements wake.Link; pongs and unsubscribe confirmations are
// not events and are skipped.
func (p *PubSub) Receive(ctx context.Context) (wake.Event, error) {
	for {
		msg, err := p.ps.Receive(ctx)
		if err != nil {
			return wake.Event{}, err
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			switch m.Kind {
			case "subscribe":
				return wake.Event{Kind: wake.Subscribed, Channel: m.Channel}, nil
			case "psubscribe":
				return wake.Event{Kind: wake.PSubscribed, Channel: m.Channel}, nil
			}
		case *redis.Message:
			return wake.Event{Kind: wake.Message, Channel: m.Channel, Pattern: m.Pattern, Payload: m.Payload}, nil
		}
	}
}

// Close implements wake.Link.
func (p *PubSub) Close() error {
	_ = p.ps.Close()
	return p.client.Close()
}
