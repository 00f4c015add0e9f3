package e2e

// Fair waiting (LOCK.ACQUIRE ... WAIT): waiters on two replicas are granted
// in arrival order; one that times out or hangs up leaves the queue.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// queuedOn counts the backends that queue waiter for key.
func queuedOn(t *testing.T, h *harness.Harness, key, waiter string) int {
	t.Helper()
	n := 0
	for _, b := range h.Backend {
		if err := b.Client().ZScore(context.Background(), quorum.QueueKey(key), waiter).Err(); err == nil {
			n++
		}
	}
	return n
}

func TestWaitersGrantedInArrivalOrder(t *testing.T) {
	h := harness.New(t, 3, nil)
	_, addr2 := h.Serve()
	addrs := []string{h.Addr, addr2}
	ctx := t.Context()
	holder := h.Client()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "fair", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var (
		mu      sync.Mutex
		granted []string
		tokens  []int64
		wg      sync.WaitGroup
	)
	arrival := make([]string, n)
	for i := range n {
		// Names sort against arrival: the queue's tickets decide, not names.
		w := fmt.Sprintf("w%02d", n-i)
		arrival[i] = w
		c := redis.NewClient(&redis.Options{Addr: addrs[i%2], MaxRetries: -1, ReadTimeout: time.Minute})
		defer c.Close()
		wg.Go(func() {
			tok, err := c.Do(ctx, "LOCK.ACQUIRE", "fair", w, 60000, "WAIT", 60000).Int64()
			if err != nil {
				t.Errorf("%s: %v", w, err)
				return
			}
			mu.Lock()
			granted, tokens = append(granted, w), append(tokens, tok)
			mu.Unlock()
			if err := c.Do(ctx, "LOCK.RELEASE", "fair", w).Err(); err != nil {
				t.Errorf("%s release: %v", w, err)
			}
		})
		harness.Eventually(t, w+" queued on a quorum", func() bool { return queuedOn(t, h, "fair", w) >= 2 })
	}
	second := redis.NewClient(&redis.Options{Addr: addr2})
	defer second.Close()
	if got := infoInt(t, holder, "blocked_clients") + infoInt(t, second, "blocked_clients"); got != n {
		t.Fatalf("blocked_clients on both replicas = %d, want %d", got, n)
	}
	if err := holder.Do(ctx, "LOCK.RELEASE", "fair", "holder").Err(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range granted {
		if granted[i] != arrival[i] {
			t.Fatalf("granted in order %v; want arrival order %v", granted, arrival)
		}
		if i > 0 && tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens %v do not increase", tokens)
		}
	}
}

func TestWaitersLeaveTheQueue(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	holder := h.Client()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "busy", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	// Timed out: nil after its wait, and out of the queue.
	start := time.Now()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "busy", "patient", 60000, "WAIT", 500).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE WAIT 500 of a held lock = %v; want nil", err)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("WAIT 500 answered after %v", waited)
	}
	if got := queuedOn(t, h, "busy", "patient"); got != 0 {
		t.Fatalf("a waiter that timed out is still queued on %d backends", got)
	}

	// Hung up: out of the queue at once, long before its wait would end.
	nc, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(nc, "LOCK.ACQUIRE busy gone 60000 WAIT 60000\r\n"); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the waiter queued", func() bool { return queuedOn(t, h, "busy", "gone") >= 2 })
	_ = nc.Close()
	harness.Eventually(t, "the waiter that hung up to leave the queue", func() bool { return queuedOn(t, h, "busy", "gone") == 0 })

	// A waiter behind one that left is granted once the lock is released.
	got := make(chan error, 1)
	go func() { got <- h.Client().Do(ctx, "LOCK.ACQUIRE", "busy", "next", 60000, "WAIT", 60000).Err() }()
	harness.Eventually(t, "the next waiter queued", func() bool { return queuedOn(t, h, "busy", "next") >= 2 })
	if err := holder.Do(ctx, "LOCK.RELEASE", "busy", "holder").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiter after a release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not granted within 5s of the release")
	}
}

// A graceful shutdown does not wait for a WAIT to run out: the waiter is
// told at once, leaves the queue, and may ask another replica.
func TestShutdownEndsWaits(t *testing.T) {
	h := harness.New(t, 3, nil)
	a, addr := h.Serve()
	ctx := t.Context()
	if err := h.Client().Do(ctx, "LOCK.ACQUIRE", "held", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Minute})
	defer c.Close()
	got := make(chan error, 1)
	go func() { got <- c.Do(ctx, "LOCK.ACQUIRE", "held", "waiter", 60000, "WAIT", 60000).Err() }()
	harness.Eventually(t, "the waiter queued", func() bool { return queuedOn(t, h, "held", "waiter") >= 2 })
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := a.Server.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Shutdown took %v behind a 60 s WAIT", took)
	}
	if err := <-got; err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("the waiter got %v; want the shutdown error", err)
	}
	if n := queuedOn(t, h, "held", "waiter"); n != 0 {
		t.Fatalf("the waiter is still queued on %d backends", n)
	}
}

// A session lock granted after a WAIT longer than its TTL is renewed from
// its grant, not from the request's arrival (which would count it lost at
// once).
func TestSessionLockAfterALongWait(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.NativeLockDelay = 0 })
	ctx := t.Context()
	holder := h.Client()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "k", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	const ttl = 3 * time.Second // six renewal ticks: a busy machine may delay a renewal or two
	time.AfterFunc(2*ttl, func() { _ = holder.Do(context.Background(), "LOCK.RELEASE", "k", "holder").Err() })
	waiter := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	if err := waiter.Do(ctx, "LOCK.ACQUIRE", "k", "waiter", ttl.Milliseconds(), "WAIT", 10000, "SESSION").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	if n := h.Holders("k", "waiter"); n < 2 {
		t.Fatalf("the session lock granted after a wait is held on %d backends two TTLs later; want a quorum", n)
	}
	if lost := infoInt(t, holder, "session_lost"); lost != 0 {
		t.Fatalf("session_lost = %d", lost)
	}
}
