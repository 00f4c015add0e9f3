package e2e

// Hostile clients of the wake-up channels: patterns, tenants, floods.

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Finding 3: PSUBSCRIBE with patterns like *a*b*...*y<n> and a PUBLISH to a
// huge channel name made the backends spend seconds matching, starving
// every tenant's lock rounds. Client patterns must never reach a backend
// (each backend holds at most the replica's one catch-all pattern), and
// channel names are bounded.
func TestPatternsNeverReachTheBackends(t *testing.T) {
	// Past the per-user pattern budget (issue 25): this is about the backends.
	h := harness.New(t, 3, func(c *config.Config) { c.MaxPatternsPerUser, c.MaxPatternBytesPerUser = 0, 0 })
	attacker, ctx := h.Client(), t.Context()
	var patterns []string
	for n := range 400 {
		patterns = append(patterns, strings.Join(strings.Split("abcdefghijklmnopqrstuvwxy", ""), "*")+fmt.Sprint("*", n))
	}
	ps := attacker.PSubscribe(ctx, patterns...)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range h.Backend {
		harness.Eventually(t, "the subscriptions settle", func() bool {
			n, err := b.Client().PubSubNumPat(ctx).Result()
			if err == nil && n > 1 {
				t.Fatalf("backend %s matches %d client patterns on every PUBLISH; want at most the replica's one", b.Addr, n)
			}
			return err == nil
		})
	}
	publisher := h.Client()
	start := time.Now()
	err := publisher.Publish(ctx, strings.Repeat("a", 50000), "x").Err()
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("PUBLISH to a 50 KB channel name = %v after %v; want refused", err, time.Since(start))
	}
	honest := h.Client()
	for i := range 20 {
		s := time.Now()
		if _, err := honest.SetNX(ctx, fmt.Sprint("lock:honest", i), "v", 5*time.Second).Result(); err != nil || time.Since(s) > time.Second {
			t.Fatalf("an honest lock during the attack: %v after %v", err, time.Since(s))
		}
	}
}

// Finding 4: pub/sub ignored key prefixes: a tenant's PSUBSCRIBE * heard
// another tenant's Redisson channel, its PUBLISH reached another tenant's
// waiters, a Spring unlock script published on a foreign channel; and
// Redisson's own channel redisson_lock__channel:{<prefix>lock} was refused.
func TestPubSubIsolatesTenants(t *testing.T) {
	alice, bob := twoTenants(t)
	ctx := t.Context()

	// Redisson's unlock names its channel and latch as keys: they are the
	// lock's, so they are alice's.
	unlock := clientScript(t, shaRUnlock)
	if err := alice.Eval(ctx, unlock, []string{"a:lock", "redisson_lock__channel:{a:lock}", "redisson_unlock_latch:{a:lock}:1"},
		0, 30000, "uuid:1", "publish", 1000).Err(); err != nil && err != redis.Nil {
		t.Fatalf("alice's Redisson unlock of her own lock = %v; want nil (not held), never NOPERM", err)
	}
	own := alice.Subscribe(ctx, "redisson_lock__channel:{a:lock}")
	t.Cleanup(func() { _ = own.Close() })
	if _, err := own.Receive(ctx); err != nil {
		t.Fatalf("alice subscribing to her own Redisson channel: %v", err)
	}
	spy := alice.PSubscribe(ctx, "*")
	t.Cleanup(func() { _ = spy.Close() })
	if _, err := spy.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bob.Publish(ctx, "redisson_lock__channel:{b:lock}", "0").Err(); err != nil {
		t.Fatalf("bob publishing on his own channel: %v", err)
	}
	if err := bob.Publish(ctx, "redisson_lock__channel:{a:lock}", "0").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("bob publishing on alice's channel = %v; want NOPERM", err)
	}
	if err := alice.Publish(ctx, "redisson_lock__channel:{a:lock}", "mine").Err(); err != nil {
		t.Fatalf("alice publishing on her own channel: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for {
		msg, err := spy.ReceiveMessage(rctx)
		if err != nil {
			t.Fatalf("alice's PSUBSCRIBE * got nothing, not even her own message: %v", err)
		}
		if strings.Contains(msg.Channel, "{b:") || msg.Payload == "0" {
			t.Fatalf("alice's PSUBSCRIBE * received another tenant's message on %s", msg.Channel)
		}
		if msg.Payload == "mine" {
			break
		}
	}
	foreign := bob.Subscribe(ctx, "a:events")
	t.Cleanup(func() { _ = foreign.Close() })
	if _, err := foreign.Receive(ctx); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("bob subscribing to alice's channel = %v; want NOPERM", err)
	}
	const springReleaseNotify = "7a71e9443a2a41539fb115a5a27d5a748a871aed"
	if err := alice.EvalSha(ctx, springReleaseNotify, []string{"a:lock"}, "owner", "b:registry-channel").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("alice's Spring unlock publishing on bob's channel = %v; want NOPERM", err)
	}
}

// Finding 5: 60k pipelined PUBLISHes took about 65 s to deliver. Each of
// many wake-ups reaches the subscriber once (wake's
// TestDedupCostDoesNotGrowWithHistory holds the cost to account).
func TestManyWakeUpsAreDeliveredOnce(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	sub := h.Client().Subscribe(ctx, "lock:events")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 40000
	got := make(chan int, 1)
	go func() {
		ch, count := sub.Channel(redis.WithChannelSize(n)), 0
		for range ch {
			if count++; count == n {
				break
			}
		}
		got <- count
	}()
	pub := h.Client()
	start := time.Now()
	for sent := 0; sent < n; sent += 1000 {
		if _, err := pub.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 1000 {
				p.Publish(ctx, "lock:events", fmt.Sprint(sent+i))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case count := <-got:
		t.Logf("%d messages delivered once each in %v", count, time.Since(start))
	case <-time.After(60 * time.Second):
		t.Fatalf("not all of %d messages delivered after 60 s", n)
	}
}

// Finding 7: no limit on subscriptions per client (100k channels grew the
// backends' memory from 1.5 to 24 MB).
func TestSubscriptionsPerClientAreBounded(t *testing.T) {
	h := harness.New(t, 3, nil)
	nc := dialRaw(t, h.Addr)
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n$9\r\nSUBSCRIBE\r\n", 2001)
	for i := range 2000 {
		ch := fmt.Sprint("ch", i)
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(ch), ch)
	}
	fmt.Fprint(nc, b.String())
	line, _ := bufio.NewReader(nc).ReadString('\n')
	if !strings.HasPrefix(line, "-ERR too many subscriptions") {
		t.Fatalf("SUBSCRIBE of 2000 channels answered %q; want the limit's error", line)
	}
}

// twoTenants starts a proxy with users alice (prefix a:) and bob (prefix b:)
// and returns a client logged in as each.
func twoTenants(t *testing.T) (alice, bob *redis.Client) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{{Name: "alice", Password: "a-pass", Prefix: "a:"}, {Name: "bob", Password: "b-pass", Prefix: "b:"}}
	})
	alice = h.Client(func(o *redis.Options) { o.Username, o.Password = "alice", "a-pass" })
	bob = h.Client(func(o *redis.Options) { o.Username, o.Password = "bob", "b-pass" })
	return alice, bob
}
