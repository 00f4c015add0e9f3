package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// A session lock's holder re-attaches it through another replica while the
// connection that took it on the first replica is still open (a half-open
// connection its replica has not noticed yet, or a client that moved on).
// The lock moves: the first connection's renewals no longer reach it (they
// would set back the longer TTL the re-attach promised), and its close
// later does not release it; the other replica renews it from then on, and
// the second connection's close releases it. Another owner never gets it
// in between, through either replica.
func TestReattachMovesTheLock(t *testing.T) {
	sleepBound(t)
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = tick; c.NativeLockDelay = 0 })
	_, addrB := h.Serve()
	ctx := context.Background()
	first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer first.Close()
	second := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer second.Close()
	viaA, viaB := h.Client(), replicaAt(t, addrB)

	token, err := first.Do(ctx, "LOCK.ACQUIRE", "moved", "owner", 3000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	// Another owner is refused; the holder re-attaches through B with a
	// longer TTL and gets the same token.
	if err := second.Do(ctx, "LOCK.ACQUIRE", "moved", "other", 3000, "SESSION").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("another owner's LOCK.ACQUIRE SESSION = %v; want nil", err)
	}
	again, err := second.Do(ctx, "LOCK.ACQUIRE", "moved", "owner", 9000, "SESSION").Int64()
	if err != nil || again != token {
		t.Fatalf("re-attach through another replica = %d, %v; want the lock's token %d", again, err, token)
	}
	// A's renewer would have renewed the lock within two ticks (a third of
	// 3 s): it must not have set the TTL back below what B promised.
	time.Sleep(6 * tick)
	for i, b := range h.Backend {
		if pttl := b.Client().PTTL(ctx, "moved").Val(); pttl < 6*time.Second {
			t.Errorf("backend %d: PTTL %v after the old connection's renewals; the re-attach promised 9s", i, pttl)
		}
	}
	// The old connection closes: its release must not reach the lock.
	_ = first.Close()
	checkHeld := func(what string) {
		t.Helper()
		for _, c := range []*redis.Client{viaA, viaB} {
			if ok, err := c.SetNX(ctx, "moved", "thief", time.Second).Result(); err != nil || ok {
				t.Fatalf("%s: SET NX by another owner = %v, %v; want refused", what, ok, err)
			}
			if got, err := c.Do(ctx, "LOCK.TOKEN", "moved", "owner").Int64(); err != nil || got != token {
				t.Fatalf("%s: LOCK.TOKEN = %d, %v; want %d", what, got, err, token)
			}
		}
	}
	time.Sleep(4 * tick)
	checkHeld("after the old connection closed")
	// B renews it past the re-attach's 9 s.
	time.Sleep(10 * time.Second)
	checkHeld("past the re-attached TTL")
	// The connection it moved to releases it when it closes.
	_ = second.Close()
	harness.Eventually(t, "the lock released at the close of the connection it moved to", func() bool {
		return h.Holders("moved", "owner") == 0
	})
}

// Re-attaching is the holder's alone, and only with SESSION: LOCK.ACQUIRE
// without SESSION by the holder still answers nil (as a second SET NX
// would), and a lock that expired meanwhile is taken anew with a new token.
func TestReattachOnlyByTheHolderWithSession(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.NativeLockDelay = 0 })
	ctx := context.Background()
	c := h.Client()
	token, err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "owner", 2000).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "owner", 2000).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE without SESSION by the holder = %v; want nil", err)
	}
	if err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "other", 2000, "SESSION").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE SESSION by another owner = %v; want nil", err)
	}
	start := time.Now()
	if err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "other", 2000, "WAIT", 300, "SESSION").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE WAIT SESSION by another owner = %v; want nil after the wait", err)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Fatalf("another owner's WAIT answered after %v; want the whole wait", took)
	}
	// With WAIT, the holder re-attaches at once rather than queueing behind itself.
	start = time.Now()
	got, err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "owner", 3000, "WAIT", 10000, "SESSION").Int64()
	if err != nil || got != token {
		t.Fatalf("re-attach with WAIT = %d, %v; want %d", got, err, token)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("re-attach with WAIT took %v", took)
	}
	if n := infoInt(t, c, "session_locks"); n != 1 {
		t.Fatalf("session_locks = %d after the re-attach; want 1", n)
	}
	// Released, then expired: a new grant, with a larger token.
	if n, err := c.Do(ctx, "LOCK.RELEASE", "ra", "owner").Int64(); err != nil || n != 1 {
		t.Fatalf("LOCK.RELEASE = %d, %v", n, err)
	}
	next, err := c.Do(ctx, "LOCK.ACQUIRE", "ra", "owner", 3000, "SESSION").Int64()
	if err != nil || next <= token {
		t.Fatalf("LOCK.ACQUIRE SESSION of a free lock = %d, %v; want a new token above %d", next, err, token)
	}
}

// Probes of the re-attach a reviewer would try (issue 28): a Redisson hash
// lock is never re-attached (nil, as any taken LOCK.ACQUIRE); a SET NX PX
// lock re-attached by its value gets one token, the same on every replica
// and every read; two concurrent re-attaches of one owner through two
// replicas leave no second owner, and the lock goes when both connections
// close.
func TestReattachProbes(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = 250 * time.Millisecond; c.NativeLockDelay = 0 })
	_, addrB := h.Serve()
	ctx := context.Background()
	viaA, viaB := h.Client(), replicaAt(t, addrB)

	// A Redisson hash lock.
	lock := clientScript(t, shaRLock)
	if err := viaA.Eval(ctx, lock, []string{"{hash}"}, 10000, "uuid:1").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("Redisson lock = %v", err)
	}
	if err := viaB.Do(ctx, "LOCK.ACQUIRE", "{hash}", "uuid:1", 3000, "SESSION").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE SESSION of a Redisson hash lock by its field = %v; want nil", err)
	}

	// A SET NX PX lock re-attached by its value.
	if ok, err := viaA.SetNX(ctx, "plain", "v1", 5*time.Second).Result(); err != nil || !ok {
		t.Fatalf("SET NX PX = %v, %v", ok, err)
	}
	sess := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer sess.Close()
	tok, err := sess.Do(ctx, "LOCK.ACQUIRE", "plain", "v1", 3000, "SESSION").Int64()
	if err != nil || tok == 0 {
		t.Fatalf("re-attach of a SET NX PX lock = %d, %v", tok, err)
	}
	for i := range 4 {
		for _, c := range []*redis.Client{viaA, viaB} {
			if got, err := c.Do(ctx, "LOCK.TOKEN", "plain").Int64(); err != nil || got != tok {
				t.Fatalf("read %d: LOCK.TOKEN = %d, %v; want the re-attach's %d", i, got, err, tok)
			}
		}
	}
	time.Sleep(6 * time.Second) // past the SET's 5 s: the session renews it
	if ok, err := viaA.SetNX(ctx, "plain", "thief", time.Second).Result(); err != nil || ok {
		t.Fatalf("SET NX by another owner after the first TTL = %v, %v; want refused", ok, err)
	}
	_ = sess.Close()
	harness.Eventually(t, "the re-attached SET lock released at its session's close", func() bool { return h.Holders("plain", "v1") == 0 })

	// Two re-attaches of one owner at once, through both replicas.
	first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer first.Close()
	base, err := first.Do(ctx, "LOCK.ACQUIRE", "twice", "o", 3000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	conns := []*redis.Client{
		redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1}),
		redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1}),
	}
	got := make(chan error, 2)
	for _, c := range conns {
		go func() {
			tok, err := c.Do(ctx, "LOCK.ACQUIRE", "twice", "o", 3000, "SESSION").Int64()
			if err == nil && tok != base {
				err = fmt.Errorf("token %d, want %d", tok, base)
			}
			if isNoQuorum(err) {
				err = nil // a re-attach that met the other one's round: the holder asks again
			}
			got <- err
		}()
	}
	for range conns {
		if err := <-got; err != nil {
			t.Fatalf("concurrent re-attach: %v", err)
		}
	}
	_ = first.Close()
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range []*redis.Client{viaA, viaB} {
			if tok, err := c.Do(ctx, "LOCK.ACQUIRE", "twice", "thief", 1000).Int64(); err == nil {
				// Allowed only once no connection renews it: both live connections booked it.
				t.Fatalf("another owner got token %d while two live connections had re-attached the lock", tok)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range conns {
		_ = c.Close()
	}
	harness.Eventually(t, "the lock gone after every connection that re-attached it closed", func() bool { return h.Holders("twice", "o") == 0 })
}
