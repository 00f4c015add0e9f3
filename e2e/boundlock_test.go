package e2e

// Connection-bound locks: SET key value NX without a TTL (redis-py's
// r.lock(name) with no timeout) is held while its connection lives, reads
// PTTL -1 from every replica and connection, and is freed when the
// connection closes.

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

const boundLease = 1500 * time.Millisecond

func boundHarness(t *testing.T) *harness.Harness {
	return harness.New(t, 5, func(c *config.Config) { c.SessionTick, c.BoundLease = sessionTick, boundLease })
}

// oneConn is a client with one connection of its own: closing it closes the socket.
func oneConn(h *harness.Harness) *redis.Client {
	return h.Client(func(o *redis.Options) { o.PoolSize = 1 })
}

// wantPTTL checks PTTL and TTL of key read through c.
func wantPTTL(t *testing.T, c *redis.Client, key string, want int64) {
	t.Helper()
	ctx := t.Context()
	if got, err := c.Do(ctx, "PTTL", key).Int64(); err != nil || got != want {
		t.Fatalf("PTTL %s = %d, %v; want %d", key, got, err, want)
	}
	if got, err := c.Do(ctx, "TTL", key).Int64(); err != nil || got != want {
		t.Fatalf("TTL %s = %d, %v; want %d", key, got, err, want)
	}
}

// TestBoundLockRedisPyShape: what redis-py's no-timeout lock sends.
func TestBoundLockRedisPyShape(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	if got, err := a.Do(ctx, "SET", "py:nottl", "tokA", "NX").Result(); err != nil || got != "OK" {
		t.Fatalf("SET NX without a TTL = %v, %v; want OK", got, err)
	}
	wantPTTL(t, a, "py:nottl", -1)
	wantPTTL(t, b, "py:nottl", -1) // any connection
	if got, err := b.Get(ctx, "py:nottl").Result(); err != nil || got != "tokA" {
		t.Fatalf("GET = %q, %v; want tokA", got, err)
	}
	if err := b.Do(ctx, "SET", "py:nottl", "tokB", "NX").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a second owner's SET NX = %v; want nil (taken)", err)
	}
	if n, err := b.Eval(ctx, clientScript(t, shaRedisPyRelease), []string{"py:nottl"}, "tokB").Int(); err != nil || n != 0 {
		t.Fatalf("a foreign release = %d, %v; want 0", n, err)
	}
	if n, err := a.Eval(ctx, clientScript(t, shaRedisPyRelease), []string{"py:nottl"}, "tokA").Int(); err != nil || n != 1 {
		t.Fatalf("redis-py's release = %d, %v; want 1", n, err)
	}
	wantPTTL(t, a, "py:nottl", -2)
	if got := infoInt(t, a, "session_locks"); got != 0 {
		t.Fatalf("session_locks = %d after the release; want 0 (no renewal after a release)", got)
	}
	if got, err := b.Do(ctx, "SET", "py:nottl", "tokB", "NX").Result(); err != nil || got != "OK" {
		t.Fatalf("SET NX once released = %v, %v; want OK", got, err)
	}
	// A release on another connection than the acquire (a client's pool)
	// takes the lock out of the renewer's book too: nothing sets it again.
	if n, err := a.Eval(ctx, clientScript(t, shaRedisPyRelease), []string{"py:nottl"}, "tokB").Int(); err != nil || n != 1 {
		t.Fatalf("release from another connection = %d, %v; want 1", n, err)
	}
	time.Sleep(3 * sessionTick)
	if got := h.Holders("py:nottl", "tokB"); got != 0 {
		t.Fatalf("a released lock is back on %d backends: renewed after its release", got)
	}
	// default_ttl unset, a TTL still given: an ordinary lock.
	if err := a.Do(ctx, "SET", "py:ttl", "v", "NX", "PX", "5000").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := a.PTTL(ctx, "py:ttl").Result(); err != nil || got <= 0 {
		t.Fatalf("PTTL of a lock with a TTL = %v, %v", got, err)
	}
}

// TestBoundLockHeldWhileIdle: the connection sends nothing for four
// leases; the lock stays held on a quorum, refused to others, PTTL -1.
func TestBoundLockHeldWhileIdle(t *testing.T) {
	sleepBound(t)
	h := boundHarness(t)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	if err := a.Do(ctx, "SET", "idle", "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * boundLease)
	if got := h.Holders("idle", "tokA"); got < 3 {
		t.Fatalf("held on %d of 5 backends after four leases; want a quorum (renewed)", got)
	}
	if err := b.Do(ctx, "SET", "idle", "tokB", "NX").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("another owner's SET NX after four leases = %v; want nil (still held)", err)
	}
	wantPTTL(t, b, "idle", -1)
	if got := infoInt(t, b, "session_lost"); got != 0 {
		t.Fatalf("session_lost = %d", got)
	}
}

// TestBoundLockFreedOnClose: the holder's connection closes; another client
// gets the lock within the lease, and the closed connection's lock is never
// renewed again (it does not come back over the new owner's).
func TestBoundLockFreedOnClose(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	if err := a.Do(ctx, "SET", "closed", "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	closedAt := time.Now()
	harness.Eventually(t, "another client gets the lock of a closed connection", func() bool {
		return b.Do(ctx, "SET", "closed", "tokB", "PX", "60000", "NX").Err() == nil
	})
	// Generous: Eventually itself allows 15 s on a loaded machine; the
	// lease bounds it even if the release on close had failed.
	if took := time.Since(closedAt); took > boundLease+5*time.Second {
		t.Fatalf("freed %v after the close; want within the lease %v (plus slack)", took, boundLease)
	}
	time.Sleep(4 * sessionTick)
	if got := h.Holders("closed", "tokA"); got != 0 {
		t.Fatalf("the closed connection's lock is back on %d backends", got)
	}
	if got := h.Holders("closed", "tokB"); got < 3 {
		t.Fatalf("the new owner's lock is on %d backends", got)
	}
	if got := infoInt(t, b, "session_locks"); got != 0 {
		t.Fatalf("session_locks = %d; want 0", got)
	}
}

// TestBoundLockReplicas: a second proxy on the same backends sees PTTL -1
// and refuses another owner.
func TestBoundLockReplicas(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	a := oneConn(h)
	_, addr2 := h.Serve()
	b := redis.NewClient(&redis.Options{Addr: addr2, MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = b.Close() })
	if err := a.Do(ctx, "SET", "repl", "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	wantPTTL(t, b, "repl", -1)
	time.Sleep(2 * boundLease) // renewed by the first replica meanwhile
	wantPTTL(t, b, "repl", -1)
	if err := b.Do(ctx, "SET", "repl", "tokB", "NX").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("SET NX on the second replica = %v; want nil (taken)", err)
	}
	if n, err := a.Eval(ctx, clientScript(t, shaRedisPyRelease), []string{"repl"}, "tokA").Int(); err != nil || n != 1 {
		t.Fatalf("release = %d, %v", n, err)
	}
	wantPTTL(t, b, "repl", -2)
}

// TestSessionLockNotRestoredAfterForeignRelease: a SESSION lock released on
// another connection of the same replica (DEL, or the owner's release from
// a pooled connection) is out of the renewer's book: no renewal sets it
// again on the backends.
func TestSessionLockNotRestoredAfterForeignRelease(t *testing.T) {
	sleepBound(t)
	h := boundHarness(t)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	for _, release := range []string{"DEL", "LOCK.RELEASE"} {
		key := "foreign:" + release
		if err := a.Do(ctx, "LOCK.ACQUIRE", key, "me", 1500, "SESSION").Err(); err != nil {
			t.Fatal(err)
		}
		args := []any{release, key}
		if release == "LOCK.RELEASE" {
			args = append(args, "me")
		}
		if n, err := b.Do(ctx, args...).Int(); err != nil || n != 1 {
			t.Fatalf("%v on another connection = %d, %v; want 1", args, n, err)
		}
		time.Sleep(4 * sessionTick)
		if got := h.Holders(key, "me"); got != 0 {
			t.Fatalf("after %s on another connection the session lock is back on %d backends (renewed after its release)", release, got)
		}
	}
}
