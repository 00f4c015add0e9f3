package e2e

// Helper-76 (adversarial; failed 3 of 3 on 1db1e88, and on 749b5e7 more
// slowly; fixed: a restore notes the lock-delay of its lock's kind, and never
// shortens its own note): a session renewal's restore (pexpireifeq.lua,
// restore mode) now also sets the key again where it is absent and the note
// names the lease's own round (ownNote): a backend paused past the TTL. The
// restore writes the note with the engine's NativeLockDelay (Renew passes
// AuxTTL: e.opts.NativeLockDelay) whatever lock-delay the lock had: a
// connection-bound lock (SET NX without a TTL) is taken with lock_delay
// (AcquireBound), and so is a SET NX PX lock re-attached as a session. The
// note it overwrites carried the lock's own delay. After two such pauses (one
// backend at a time, the lock held throughout on a quorum) a quorum of
// backends keeps the lock with native_lock_delay's lead instead of
// lock_delay's; when the lock then expires unreleased (its replica shut
// down, leaving it to its TTL) another owner takes it inside lock_delay.
// README, Lock-delay: "lock_delay ... does the same for locks taken with
// SET NX PX", "a lock that expired without being released stays
// unavailable for [the delay] after its TTL".

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func noteLeads(h *harness.Harness, key string) []string {
	ctx := context.Background()
	var out []string
	for i, b := range h.Backend {
		c := b.Client()
		k := c.PExpireTime(ctx, key).Val()
		m := c.PExpireTime(ctx, quorum.MetaKey(key)).Val()
		out = append(out, fmt.Sprintf("b%d key=%v note=%q lead=%v", i, c.Get(ctx, key).Val(), c.Get(ctx, quorum.MetaKey(key)).Val(), m-k))
		c.Close()
	}
	return out
}

// shortestPTTL is the shortest TTL key has left on the backends that hold it.
func shortestPTTL(h *harness.Harness, key string) time.Duration {
	shortest := time.Duration(-1)
	for _, b := range h.Backend {
		c := b.Client()
		if d := c.PTTL(context.Background(), key).Val(); d > 0 && (shortest < 0 || d < shortest) {
			shortest = d
		}
		c.Close()
	}
	return max(shortest, 0)
}

func TestRestoresKeepABoundLocksLockDelay(t *testing.T) {
	sleepBound(t)
	const lockDelay = 5 * time.Second
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick = 250 * time.Millisecond
		c.NodeTimeout = 500 * time.Millisecond
		c.BoundLease = 1500 * time.Millisecond
		c.LockDelay = lockDelay // SET NX locks, connection-bound ones included
		c.NativeLockDelay = 0   // LOCK.ACQUIRE's: none
	})
	_, addrB := h.Serve()
	ctx := context.Background()
	const key = "restoredelay:bound"
	holder := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer holder.Close()
	if ok, err := holder.SetNX(ctx, key, "o", 0).Result(); err != nil || !ok {
		t.Fatalf("SET NX (connection-bound) = %v, %v", ok, err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "o") == 3 })
	t.Logf("taken: %q", noteLeads(h, key))

	// One backend at a time paused past the lease: the lock stays held on
	// the other two throughout, and the renewals put it back on the resumed one.
	for _, i := range []int{2, 0} {
		h.Backend[i].Pause()
		time.Sleep(2500 * time.Millisecond)
		h.Backend[i].Resume()
		harness.Eventually(t, "the lock back on every backend", func() bool { return h.Holders(key, "o") == 3 })
		time.Sleep(600 * time.Millisecond)
		t.Logf("after backend %d paused past the lease: %q", i, noteLeads(h, key))
	}

	// The replica shuts down gracefully: the lock is left to its lease,
	// unreleased. It must stay unavailable lock_delay after it expires.
	left := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := h.App.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	other := replicaAt(t, addrB)
	// Nothing renews the lock now: it expires when its copies do, the first
	// of them no earlier than the shortest TTL read now (measured, not
	// reckoned from the renewer's schedule, which a busy machine delays);
	// its delay runs lockDelay more.
	until := time.Now().Add(shortestPTTL(h, key) + lockDelay - 200*time.Millisecond)
	for time.Now().Before(until) {
		ok, err := other.SetNX(ctx, key, "thief", 10*time.Second).Result()
		if err == nil && ok {
			t.Fatalf("another owner took the lock %v after its replica left it to its lease (%v) unreleased: inside lock_delay %v (notes before: see log; now %q)",
				time.Since(left).Round(time.Millisecond), h.Cfg.BoundLease, lockDelay, noteLeads(h, key))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
