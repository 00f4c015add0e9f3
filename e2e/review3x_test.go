package e2e

// Review 3x of 35cf43d (extends and sessions) and 1ae83e4 (refusal
// back-off): each test fails while the bug it names exists.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview3xLapsedSessionGrantKeepsOwnExtend: a pipeline [session or
// bound acquire, the holder's extend to 30 s, a slow command] runs whole
// before its replies are settled. The acquire's reply lapses (its window is
// spent by the slow neighbour) and settle revokes its grant: an undo of the
// acquire's round. But the extend ran on the booking connection, so it was
// ExtendRound: it kept the acquire's round on the backends, and the undo
// deletes the lock the extend's "1" just promised for 30 s. A third client
// takes it at once. (From another connection the extend notes a new round
// and the undo misses it, as it should.)
func TestReview3xLapsedSessionGrantKeepsOwnExtend(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"session", "bound"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarness(t)
			ctx := t.Context()
			a, blocker, c := oneConn(h), oneConn(h), oneConn(h)
			key, slow := "review3x:lapse:"+how, "review3x:lapse:slow:"+how
			if err := blocker.Do(ctx, "SET", slow, "b", "NX", "PX", 30000).Err(); err != nil {
				t.Fatal(err)
			}
			acquire := []any{"LOCK.ACQUIRE", key, "tokA", 1500, "SESSION"}
			extend := []any{"LOCK.EXTEND", key, "tokA", 30000}
			if how == "bound" {
				acquire = []any{"SET", key, "tokA", "NX"}
				extend = []any{"EVAL", harness.ExtendScript, 1, key, "tokA", 30000}
			}
			p := a.Pipeline()
			acq := p.Do(ctx, acquire...)
			ext := p.Do(ctx, extend...)
			p.Do(ctx, "LOCK.ACQUIRE", slow, "w", 30000, "WAIT", 2000) // 2 s: past the acquire's 1.5 s window
			_, _ = p.Exec(ctx)
			n, err := ext.Int()
			t.Logf("acquire: %v; extend: %d, %v", acq.Err(), n, err)
			if err != nil || n != 1 {
				t.Skipf("the extend was not answered 1 (%d, %v): nothing promised", n, err)
			}
			extended := time.Now()
			for time.Since(extended) < 2*time.Second {
				if ok, err := c.SetNX(ctx, key, "tokC", 60*time.Second).Result(); err == nil && ok {
					t.Fatalf("another client took the lock %v after its owner's extend to 30 s answered 1 (the lapsed acquire's rollback deleted it; acquire answered %v)",
						time.Since(extended).Round(time.Millisecond), acq.Err())
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// TestReview3xLapsedAcquireDropsLaterReattach: in one pipeline, a SESSION
// acquire of 1.5 s, the same holder's SESSION acquire of 5 s (a re-attach:
// it moves the lock to a new round, books that round and answers the
// token), then a 2 s command. The first reply lapses and settle drops the
// first request's session ids from the connection's book: the id (key,
// owner) is the same, so it drops the re-attach's booking. The re-attach
// was answered its token (a session lock, held while the connection
// lives), yet nothing renews it: it expires after 5 s and another client
// takes it while its holder's connection is open and never released it.
//
// native_lock_delay 0 here only to keep the test short: with the default 5 s
// the lock is taken 5 s later.
func TestReview3xLapsedAcquireDropsLaterReattach(t *testing.T) {
	sleepBound(t)
	h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay = 0 })
	ctx := t.Context()
	a, blocker, c := oneConn(h), oneConn(h), oneConn(h)
	key, slow := "review3x:reattach", "review3x:reattach:slow"
	if err := blocker.Do(ctx, "SET", slow, "b", "NX", "PX", 30000).Err(); err != nil {
		t.Fatal(err)
	}
	p := a.Pipeline()
	first := p.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 1500, "SESSION")
	again := p.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 5000, "SESSION")
	p.Do(ctx, "LOCK.ACQUIRE", slow, "w", 30000, "WAIT", 2000)
	_, _ = p.Exec(ctx)
	tok, err := again.Int64()
	t.Logf("first acquire: %v; re-attach: %d, %v; session_locks %s", first.Err(), tok, err, sessionLocks(t, c))
	if err != nil || tok <= 0 {
		t.Skipf("the re-attach was not answered a token (%d, %v)", tok, err)
	}
	// A session lock of 5 s is renewed every tick while a lives: nobody
	// else may take it within twice its TTL.
	start := time.Now()
	for time.Since(start) < 8*time.Second {
		if ok, err := c.SetNX(ctx, key, "tokC", 60*time.Second).Result(); err == nil && ok {
			t.Fatalf("another client took the session lock %v after its re-attach answered token %d (its holder's connection open; session_locks %s)",
				time.Since(start).Round(time.Millisecond), tok, sessionLocks(t, c))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestReview3xRefusalFloodWithRequirepassSlowsOnlyItsConnection: "without
// users the connection's" budget (refusals.go: where no users are
// configured, everyone is the default user, one application). With only
// requirepass set, there are no users either, but AUTH gives every
// connection a *User named "default", and the budget is keyed by that name:
// every connection of the proxy shares one budget. One client's flood of
// refusals (4 connections of its pool; with one flooder the other's PINGs
// happen to slip between its pauses) holds back every other client's reads, a lock holder's
// release or extend among them, by up to a second each.
func TestReview3xRefusalFloodWithRequirepassSlowsOnlyItsConnection(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.MaxSessionLocksPerClient, c.RequirePass = 1, "pw" })
	client := func() *redis.Client { return h.Client(func(o *redis.Options) { o.Password, o.PoolSize = "pw", 1 }) }
	other := client()
	timed(t, other)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var refused atomic.Int64
	refusalFlood(ctx, &wg, client, 4, &refused)
	time.Sleep(500 * time.Millisecond)
	var otherMax time.Duration
	for range 5 {
		otherMax = max(otherMax, timed(t, other))
	}
	stop()
	wg.Wait()
	t.Logf("refusals: %d; slowest PING of another connection: %v", refused.Load(), otherMax)
	if otherMax > 900*time.Millisecond {
		t.Errorf("another connection's PING took %v during one connection's refusal flood (requirepass, no users); want it never held back", otherMax)
	}
}

// TestReview3xReleasedThroughAnotherReplicaStaysReleased: a release of a
// connection-bound or session lock unbooks it on the replica that runs the
// release only (unbook walks this process's book). Sent through another
// replica (the owner's pool behind a load balancer), it deletes key and
// note everywhere and answers 1, while the binding replica still has the
// lock booked: its next renewal finds key and note absent on every backend
// and restores the lock there for a lease. A lock its owner released, and
// was told so, comes back and blocks everyone (the cross-replica form of
// TestReview31BoundLockReleasedByEveryReleaseStaysReleased). A renewal
// already in flight may still leave a minority copy, which blocks no one.
func TestReview3xReleasedThroughAnotherReplicaStaysReleased(t *testing.T) {
	for _, how := range []string{"bound", "session"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarness(t)
			ctx := t.Context()
			_, addr2 := h.Serve()
			a := oneConn(h)
			b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			key := "review3x:relother:" + how
			acquire := []any{"SET", key, "tokA", "NX"}
			release := b.Eval
			if how == "session" {
				acquire = []any{"LOCK.ACQUIRE", key, "tokA", 1500, "SESSION"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			var n int
			var err error
			if how == "session" {
				n, err = b.Do(ctx, "LOCK.RELEASE", key, "tokA").Int()
			} else {
				n, err = release(ctx, clientScript(t, shaRedisPyRelease), []string{key}, "tokA").Int()
			}
			if err != nil || n != 1 {
				t.Fatalf("release through another replica = %d, %v; want 1", n, err)
			}
			released := time.Now()
			c := oneConn(h)
			most, free := 0, time.Duration(0)
			for time.Since(released) < 10*time.Second {
				most = max(most, h.Holders(key, "tokA"))
				if time.Since(released) > 2*sessionTick {
					if ok, err := c.SetNX(ctx, key, "tokC", time.Second).Result(); err == nil && ok {
						free = time.Since(released)
						break
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			// A renewal in flight as the release lands may restore one copy
			// on a backend it found already released (it extended the others
			// before the release reached them): a minority copy blocks no
			// one and ends with its lease. Back on a quorum, it blocks all.
			if most >= 3 || free == 0 {
				t.Errorf("%s lock released through another replica (answered 1) came back on %d of 5 backends (the binding replica's renewer restored it); "+
					"another client got it %v after the release (0: not within 10 s)", how, most, free.Round(10*time.Millisecond))
			}
			if most > 0 {
				t.Logf("a renewal in flight restored a minority copy on %d of 5 backends; another client got the lock %v after the release", most, free.Round(10*time.Millisecond))
			}
		})
	}
}

// TestReview3xFencedAcquireRacingExtend: a fenced LOCK.ACQUIRE notes its
// token beside the lock in a raise after its SET, only where the note
// still names its round. An extend of the same owner from another
// connection landing between the two (Engine.Extend notes a new round,
// 35cf43d) makes the raise miss those nodes: the acquire fails, its undo
// (by round) misses them too, and the owner's lock lives on without a
// token. Each grant must answer one token that LOCK.TOKEN, through either
// replica, answers too; each failed acquire must leave no lock of its
// owner behind unless an extend answered 1 for it. With healthy backends
// every acquire should be granted (as on 35cf43d^): the owner's extend is
// the owner's.
func TestReview3xFencedAcquireRacingExtend(t *testing.T) {
	h := harness.New(t, 5, nil)
	ctx := t.Context()
	_, addr2 := h.Serve()
	a := oneConn(h)
	b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
	r1, r2 := oneConn(h), h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
	failed, granted, orphans := 0, 0, 0
	for i := range 150 {
		key := fmt.Sprintf("review3x:fenced:%d", i)
		stop := make(chan struct{})
		var extended atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := b.Pipeline()
				cmds := make([]*redis.Cmd, 20)
				for j := range cmds {
					cmds[j] = p.Do(ctx, "LOCK.EXTEND", key, "tokA", 300)
				}
				_, _ = p.Exec(ctx)
				for _, c := range cmds {
					if n, _ := c.Int(); n == 1 {
						extended.Add(1)
					}
				}
			}
		})
		time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
		tok, err := a.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 300).Int64()
		time.Sleep(2 * time.Millisecond)
		close(stop)
		wg.Wait()
		switch {
		case err == nil:
			granted++
			t1, e1 := r1.Do(ctx, "LOCK.TOKEN", key).Int64()
			t2, e2 := r2.Do(ctx, "LOCK.TOKEN", key).Int64()
			if e1 != nil || e2 != nil || t1 != tok || t2 != tok {
				t.Errorf("%s: LOCK.ACQUIRE answered token %d; LOCK.TOKEN through the two replicas: %d (%v), %d (%v)", key, tok, t1, e1, t2, e2)
			}
		case !errors.Is(err, redis.Nil):
			failed++
			if v, _ := r1.Get(ctx, key).Result(); v == "tokA" {
				t1, e1 := r1.Do(ctx, "LOCK.TOKEN", key).Int64()
				orphans++
				if orphans > 3 {
					continue
				}
				t.Logf("%s: LOCK.ACQUIRE failed (%v), yet the owner holds it (extends answered 1: %d); its LOCK.TOKEN: %d, %v", key, err, extended.Load(), t1, e1)
			}
		}
	}
	t.Logf("granted %d, failed %d, failed yet held %d", granted, failed, orphans)
	if failed > 0 {
		t.Errorf("%d of 150 fenced acquires failed on five healthy backends that all granted them, %d of them leaving the owner's lock held "+
			"(its token unknown or one no grant answered): the owner's extends moved the round before the token raise (on 35cf43d^: 150 granted, 0 failed)", failed, orphans)
	}
}
