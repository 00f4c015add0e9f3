package wake

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// backend is the bus's subscription connection to one backend.
type backend struct {
	bus    *Bus
	client *redis.Client
	ps     *redis.PubSub
}

// receive reads the backend's messages until the bus closes; go-redis
// reconnects and resubscribes after errors.
func (be *backend) receive() {
	b := be.bus
	for {
		msg, err := be.ps.Receive(context.Background())
		if err != nil {
			if b.closed.Load() {
				return
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "psubscribe" {
				b.confirmed(strings.TrimPrefix(m.Channel, Prefix), m.Kind == "psubscribe")
			}
		case *redis.Message:
			id, message, ok := strings.Cut(m.Payload, " ")
			if !ok || !strings.HasPrefix(m.Channel, Prefix) {
				continue
			}
			channel := strings.TrimPrefix(m.Channel, Prefix)
			if m.Pattern == "" {
				b.deliver(id, channel, message, false)
				continue
			}
			b.deliverPatterns(id, channel, message) // the catch-all: match the clients' patterns here
		}
	}
}
