package proxy

// Findings of helper-68 on 9ea287d (both failed on 3b1aa24 too): a
// re-attach its client never saw answered (a pipeline neighbour held the
// reply; or it went through another replica than the lock's booking) moved
// the lock for good, and the holder's first connection lost it with no
// fault. Fixed: an unanswered re-attach moves the lock back
// (proxy/reattach.go, quorum.Engine.Unreattach), and a renewer keeps a
// booking whose lock its owner holds under another round (sessionmoved.go).

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// helper-68: connection X holds a session lock. The client re-attaches it
// on Y in a pipeline behind which another command blocks (LOCK.ACQUIRE of
// another key, held by someone else, WAIT 1500): the re-attach runs at once,
// books Y and unbooks X (unbookBefore: "answered from here on"), but its
// reply goes out only with the pipeline's, after the WAIT. The client gives
// up after 300 ms and hangs Y up, never having seen the answer: Y's close
// releases the lock (its round is the backends'), while X, told it holds
// it and never told otherwise, is open; another owner takes it. (Hung up
// before the token read ended, the lock goes back to X: 9ea287d.)
func TestPipelinedReattachHungUpBeforeItsReplyMovesBack(t *testing.T) {
	const ttl = 3000 // ms
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	addr := serveSessions(t, nodes)
	dial := func(rt time.Duration) *redis.Client { return dialOne(t, addr, rt) }
	ctx := t.Context()
	x, other, thief := dial(20*time.Second), dial(20*time.Second), dial(20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	if _, err := other.Do(ctx, "LOCK.ACQUIRE", "k2", "someone", 10000).Int64(); err != nil {
		t.Fatal(err)
	}
	y := dial(300 * time.Millisecond)
	_ = y.Ping(ctx).Err()
	p := y.Pipeline()
	re := p.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION")
	p.Do(ctx, "LOCK.ACQUIRE", "k2", "o2", 3000, "WAIT", 1500)
	_, perr := p.Exec(ctx) // times out client-side: go-redis closes the conn
	_ = y.Close()
	for end := time.Now().Add(2 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open, no fault) holds the lock; Y's pipelined re-attach, never answered (%v / %v), released it at Y's close",
				tok, token, re.Err(), perr)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// helper-68: X holds a session lock through replica A. The client
// re-attaches it through replica B on Y; Y's round moves the lock (the
// backends name Y's round), then its token read is slow (500 ms, node
// timeout 2 s: no fault) and the client gives Y up (hangs up at 150 ms).
// B books nothing and hands the round to "the lock's other bookings" on B:
// there are none; X's booking is on A, names the old round, and A's
// renewals find the lock not held by it and drop it. Nobody renews the
// lock; it expires while X, told it holds it and never told otherwise, is
// open, and another owner takes it.
func TestReattachHungUpThroughAnotherReplicaMovesBack(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	var delay atomic.Int32
	seen := make(chan struct{}, 16)
	serve := func(slow bool) string {
		var nodes []quorum.Node
		for _, a := range addrs {
			var n quorum.Node = backend.NewNode(&redis.Options{Addr: a})
			if slow {
				n = slowReads{Node: n, key: "k", delay: &delay, d: 500 * time.Millisecond, seen: seen}
			}
			nodes = append(nodes, n)
		}
		return serveSessions(t, nodes, quorum.WithNodeTimeout(2*time.Second))
	}
	hook := func(stage string) {
		if stage == "moved" {
			delay.Store(3) // the token read that follows is slow
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	a, b := serve(false), serve(true)
	dial := func(addr string, rt time.Duration) *redis.Client { return dialOne(t, addr, rt) }
	ctx := t.Context()
	x, thief := dial(a, 20*time.Second), dial(a, 20*time.Second)
	var token int64
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if token, err = x.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LOCK.ACQUIRE for 30s: %v", err)
		}
	}
	warm := dial(b, 20*time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err = warm.Do(ctx, "LOCK.ACQUIRE", "warm", "w", 5000).Int64(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B not ready: %v", err)
		}
	}
	y := dial(b, 150*time.Millisecond)
	_ = y.Ping(ctx).Err()
	_, yerr := y.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64() // times out: go-redis closes the conn
	_ = y.Close()
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open, no fault) holds the lock; Y's abandoned re-attach through replica B answered %v; X's LOCK.TOKEN now: %v",
				tok, token, yerr, x.Do(ctx, "LOCK.TOKEN", "k").Val())
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// A connection that re-attaches the lock it holds itself and is answered
// an error (its token read timed out on every node: NOQUORUM) keeps the
// lock, renewed by the booking it had: the re-attach moved it back, and
// its booking is the one it had before, not none.
func TestOwnReattachAnsweredAnErrorKeepsTheLock(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	var delay atomic.Int32
	seen := make(chan struct{}, 16)
	var nodes []quorum.Node
	for _, a := range addrs {
		nodes = append(nodes, slowReads{Node: backend.NewNode(&redis.Options{Addr: a}), key: "k", delay: &delay, d: 600 * time.Millisecond, seen: seen})
	}
	addr := serveSessions(t, nodes, quorum.WithNodeTimeout(300*time.Millisecond))
	hook := func(stage string) {
		if stage == "moved" {
			delay.Store(3) // the token read that follows times out on every node
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	ctx := t.Context()
	x, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	if _, err := x.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64(); err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("the re-attach with its token read timing out answered %v; want NOQUORUM", err)
	}
	reattachHook.Store(nil)
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open) holds the lock: its own unanswered re-attach left it booked nowhere", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
	if got, err := x.Do(ctx, "LOCK.TOKEN", "k").Int64(); err != nil || got != token {
		t.Fatalf("X's LOCK.TOKEN = %d, %v; want %d", got, err, token)
	}
	_ = x.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("X's close did not release the lock it kept")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
