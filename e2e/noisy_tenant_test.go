package e2e

// One hostile tenant must not cost the others (issue 25): patterns,
// session floods, waiter floods. Each test failed on the code before its fix.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// noisyTenants starts a proxy with tenants billing (the hostile one) and
// search (the honest one), mutate adjusting the rest of the configuration.
func noisyTenants(t *testing.T, mutate func(*config.Config)) (h *harness.Harness, billing, search func() *redis.Client) {
	h = harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{{Name: "billing", Password: "b-pass", Prefix: "billing:"}, {Name: "search", Password: "s-pass", Prefix: "search:"}}
		if mutate != nil {
			mutate(c)
		}
	})
	as := func(user, pass string) func() *redis.Client {
		return func() *redis.Client {
			return h.Client(func(o *redis.Options) { o.Username, o.Password, o.PoolSize = user, pass, 4 })
		}
	}
	return h, as("billing", "b-pass"), as("search", "s-pass")
}

// hostilePatterns subscribes up to n patterns of 256 bytes on conns
// connections of client, stopping at the first refusal; it returns how many
// were taken and the refusal.
func hostilePatterns(t *testing.T, client func() *redis.Client, conns, n int) (taken int, refusal error) {
	ctx := t.Context()
	for c := range conns {
		ps := client().PSubscribe(ctx)
		t.Cleanup(func() { _ = ps.Close() })
		for i := range n / conns {
			suffix := fmt.Sprintf("*y%d:%d", c, i) // never matches; every star a backtracking point: costly to match
			p := "billing:" + strings.Repeat("*x", (256-len(suffix)-8)/2) + suffix
			if err := ps.PSubscribe(ctx, p); err != nil {
				return taken, err
			}
			msg, err := ps.Receive(ctx)
			if err != nil {
				return taken, err
			}
			if _, ok := msg.(*redis.Subscription); !ok {
				return taken, fmt.Errorf("%v", msg)
			}
			taken++
		}
	}
	return taken, nil
}

// A user's patterns have a budget (count and total length) across all its
// connections, answered with a clear error; PUNSUBSCRIBE gives it back.
func TestPatternBudgetPerUser(t *testing.T) {
	_, billing, _ := noisyTenants(t, nil)
	taken, err := hostilePatterns(t, billing, 4, 1024)
	if err == nil || !strings.Contains(err.Error(), "too many patterns for user billing") {
		t.Fatalf("1024 patterns of 256 bytes on 4 connections: %d taken, then %v; want the per-user budget's error", taken, err)
	}
	t.Logf("%d patterns taken, then %v", taken, err)
}

// A tenant flooding its own channels under many patterns does not delay
// another tenant's pub/sub deliveries or its waiters' wake-ups: each of the
// honest tenant's messages arrives, and a WAIT hand-off completes, within a
// generous bound while the flood runs.
func TestPatternStormSparesOtherTenants(t *testing.T) {
	_, billing, search := noisyTenants(t, nil)
	taken, _ := hostilePatterns(t, billing, 4, 1024)
	t.Logf("hostile patterns: %d", taken)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for range 4 {
		pub := billing()
		wg.Go(func() {
			for ctx.Err() == nil {
				p := pub.Pipeline()
				for i := range 50 {
					p.Publish(ctx, fmt.Sprintf("billing:%d:%s", i, strings.Repeat("x", 1000)), "x")
				}
				_, _ = p.Exec(ctx)
			}
		})
	}
	time.Sleep(time.Second) // the storm's backlog builds up
	sub := search().PSubscribe(ctx, "search:*")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	honest := search()
	for i := range 10 {
		if err := honest.Publish(ctx, "search:news", fmt.Sprint(i)).Err(); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := sub.ReceiveMessage(rctx)
		cancel()
		if err != nil || msg.Payload != fmt.Sprint(i) {
			t.Fatalf("honest message %d during the storm: %v %v; want it within 5s", i, msg, err)
		}
	}
	holder, waiter := search(), search()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "search:lock", "a", 30000).Err(); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- waiter.Do(ctx, "LOCK.ACQUIRE", "search:lock", "b", 30000, "WAIT", 60000).Err() }()
	time.Sleep(300 * time.Millisecond) // b parks
	released := time.Now()
	if err := holder.Do(ctx, "LOCK.RELEASE", "search:lock", "a").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the honest waiter: %v", err)
		}
		t.Logf("WAIT hand-off during the storm: %v", time.Since(released))
	case <-time.After(10 * time.Second):
		t.Fatal("the honest waiter was not woken within 10s of the release during the storm")
	}
}
