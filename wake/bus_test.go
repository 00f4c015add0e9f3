package wake_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// recorder is a subscriber that keeps what it gets.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) Deliver(pattern, channel, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, pattern+"|"+channel+"|"+message)
}

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// waitFor polls until r has n messages, then waits a little longer for
// duplicates, and returns what it has.
func (r *recorder) waitFor(n int) []string {
	for deadline := time.Now().Add(5 * time.Second); len(r.messages()) < n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond)
	return r.messages()
}

func newBus(t *testing.T, servers []*redistest.Server) *wake.Bus {
	links := make([]wake.Link, len(servers))
	for i, s := range servers {
		links[i] = backend.NewPubSub(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	}
	b := wake.New(links, time.Second, slog.New(slog.DiscardHandler))
	t.Cleanup(b.Close)
	return b
}

// Two replicas over three backends: each message reaches the other
// replica's subscribers once, by channel and by pattern, and stops after
// UNSUBSCRIBE; it still arrives with one backend down.
func TestBusAcrossReplicas(t *testing.T) {
	servers := redistest.Start(t, 3)
	one, two := newBus(t, servers), newBus(t, servers)
	ctx := context.Background()
	var byChannel, byPattern, bystander recorder
	two.Subscribe(ctx, &byChannel, "redisson_lock__channel:{a}")
	two.PSubscribe(ctx, &byPattern, "redisson_lock__channel:*")
	two.Subscribe(ctx, &bystander, "other")
	// Subscribe returned: a majority of backends already listen.
	listening := 0
	for _, srv := range servers {
		if n := srv.Client().PubSubNumSub(ctx, wake.Prefix+"redisson_lock__channel:{a}").Val(); n[wake.Prefix+"redisson_lock__channel:{a}"] > 0 {
			listening++
		}
	}
	if listening < 2 {
		t.Fatalf("Subscribe returned with %d of 3 backends listening", listening)
	}

	// A backend counts replica two's channel and pattern listeners.
	if n, err := one.Publish(ctx, "redisson_lock__channel:{a}", "0"); err != nil || n != 2 {
		t.Fatalf("Publish = %d, %v; want 2 listeners", n, err)
	}
	if got := byChannel.waitFor(1); len(got) != 1 || got[0] != "|redisson_lock__channel:{a}|0" {
		t.Fatalf("channel subscriber got %q", got)
	}
	if got := byPattern.messages(); len(got) != 1 || got[0] != "redisson_lock__channel:*|redisson_lock__channel:{a}|0" {
		t.Fatalf("pattern subscriber got %q", got)
	}
	if got := bystander.messages(); len(got) != 0 {
		t.Fatalf("a subscriber of another channel got %q", got)
	}

	servers[0].Kill()
	if _, err := one.Publish(ctx, "redisson_lock__channel:{a}", "again"); err != nil {
		t.Fatal(err)
	}
	if got := byChannel.waitFor(2); len(got) != 2 || got[1] != "|redisson_lock__channel:{a}|again" {
		t.Fatalf("with a backend down the subscriber got %q", got)
	}

	two.Unsubscribe(&byChannel, "redisson_lock__channel:{a}")
	if _, err := one.Publish(ctx, "redisson_lock__channel:{a}", "late"); err != nil {
		t.Fatal(err)
	}
	if got := byPattern.waitFor(3); len(got) != 3 {
		t.Fatalf("the pattern subscriber got %q; want all 3", got)
	}
	if got := byChannel.messages(); len(got) != 2 {
		t.Fatalf("after UNSUBSCRIBE the subscriber got %q", got)
	}
}

// Without backends, a bus reaches its own subscribers.
func TestBusLocal(t *testing.T) {
	b := wake.New(nil, time.Second, slog.New(slog.DiscardHandler))
	var r, p recorder
	ctx := t.Context()
	b.Subscribe(ctx, &r, "ch")
	b.PSubscribe(ctx, &p, "c?")
	if n, err := b.Publish(context.Background(), "ch", "hi"); err != nil || n != 2 {
		t.Fatalf("Publish = %d, %v; want 2 local subscribers", n, err)
	}
	if got := r.messages(); len(got) != 1 || got[0] != "|ch|hi" {
		t.Fatalf("got %q", got)
	}
	if got := p.messages(); len(got) != 1 || got[0] != "c?|ch|hi" {
		t.Fatalf("pattern got %q", got)
	}
}
