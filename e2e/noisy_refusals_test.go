package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// refusalFlood pipelines 50 SESSION acquires at a time, past
// max_session_locks_per_client (1 here), on conns connections of client until
// ctx ends, and counts the refusals.
func refusalFlood(ctx context.Context, wg *sync.WaitGroup, client func() *redis.Client, conns int, refused *atomic.Int64) {
	for conn := range conns {
		c := client()
		wg.Go(func() {
			_ = c.Do(ctx, "LOCK.ACQUIRE", fmt.Sprintf("billing:flood:%d", conn), "o", 3000, "SESSION").Err() // its one
			for i := 0; ctx.Err() == nil; i++ {
				p := c.Pipeline()
				for j := range 50 {
					p.Do(ctx, "LOCK.ACQUIRE", fmt.Sprintf("billing:flood:%d:%d:%d", conn, i, j), "o", 3000, "SESSION")
				}
				cmds, _ := p.Exec(ctx)
				for _, cmd := range cmds {
					if err := cmd.Err(); err != nil && ctx.Err() == nil {
						refused.Add(1)
					}
				}
			}
		})
	}
}

// timed is how long one PING on c takes.
func timed(t *testing.T, c *redis.Client) time.Duration {
	start := time.Now()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// A tenant asking past its limits as fast as it can (issue 25) is answered
// at the pace of its refusal budget (limit_refusals_per_user, 100 a second
// by default), not as fast as it asks: past the budget each of its
// connections, a quiet one too, waits before its next read, and another
// tenant does not. Before, 4 connections got tens of thousands of refusals
// a second, each sharing the proxy's CPU with every tenant's rounds.
func TestRefusalFloodSlowsOnlyItsUser(t *testing.T) {
	_, billing, search := noisyTenants(t, func(c *config.Config) { c.MaxSessionLocksPerClient = 1 })
	quiet, honest := billing(), search()
	timed(t, quiet) // connected and authenticated before the flood
	timed(t, honest)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var refused atomic.Int64
	refusalFlood(ctx, &wg, billing, 4, &refused)
	time.Sleep(500 * time.Millisecond) // past the budget
	var quietMax, honestMax time.Duration
	for range 5 {
		quietMax, honestMax = max(quietMax, timed(t, quiet)), max(honestMax, timed(t, honest))
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	n := refused.Load()
	t.Logf("refusals in about 2.5 s: %d; slowest PING: billing's quiet connection %v, search's %v", n, quietMax, honestMax)
	if n > 2500 {
		t.Errorf("%d refusals in about 2.5 s on 4 connections; want the pace of the budget (100 a second, each connection held back for up to a second per read: well under 2500)", n)
	}
	if quietMax < 100*time.Millisecond {
		t.Errorf("billing's quiet connection answered every PING within %v during its user's refusal flood; want it held back like the user's other connections", quietMax)
	}
	if honestMax > 900*time.Millisecond {
		t.Errorf("search's PING took %v during billing's refusal flood; want it never held back (another user's budget)", honestMax)
	}
}

// Without users (one application, everyone the default user), the budget is
// each connection's own: a connection flooding refusals waits, the others
// do not.
func TestRefusalFloodWithoutUsersSlowsOnlyItsConnection(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.MaxSessionLocksPerClient = 1 })
	other := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	timed(t, other)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var refused atomic.Int64
	refusalFlood(ctx, &wg, func() *redis.Client { return h.Client(func(o *redis.Options) { o.PoolSize = 1 }) }, 1, &refused)
	time.Sleep(500 * time.Millisecond)
	var otherMax time.Duration
	for range 5 {
		otherMax = max(otherMax, timed(t, other))
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	n := refused.Load()
	t.Logf("refusals in about 2.5 s: %d; slowest PING of another connection: %v", n, otherMax)
	if n > 1000 {
		t.Errorf("%d refusals in about 2.5 s on one connection; want the pace of its budget (well under 1000)", n)
	}
	if otherMax > 900*time.Millisecond {
		t.Errorf("another connection's PING took %v; want it never held back for one connection's refusals", otherMax)
	}
}
