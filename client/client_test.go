package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// proxy is a go-redis client to a redlock-proxy over embedded backends.
func proxy(t testing.TB) *redis.Client { return harness.New(t, 0, nil).Client() }

func TestLockCycle(t *testing.T) {
	c := client.New(proxy(t))
	ctx := t.Context()
	first, err := c.Obtain(ctx, "job", time.Minute)
	if err != nil || first.Token() < 1 || len(first.Owner()) != 32 {
		t.Fatalf("Obtain = %+v, %v; want a lock with a token and a random owner", first, err)
	}
	if _, err := c.Obtain(ctx, "job", time.Minute, client.WithOwner("other")); !errors.Is(err, client.ErrNotObtained) {
		t.Fatalf("Obtain of a held lock = %v; want ErrNotObtained", err)
	}
	if tok, err := c.Token(ctx, "job"); err != nil || tok != first.Token() {
		t.Fatalf("Token = %d, %v; want %d", tok, err, first.Token())
	}
	if err := first.Refresh(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("second Release = %v; want ErrLockNotHeld", err)
	}
	if err := first.Refresh(ctx, time.Minute); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("Refresh after Release = %v; want ErrLockNotHeld", err)
	}
	if _, err := c.Token(ctx, "job"); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("Token of a free lock = %v; want ErrLockNotHeld", err)
	}
	second, err := c.Obtain(ctx, "job", time.Minute, client.WithOwner("worker-2"))
	if err != nil || second.Token() <= first.Token() || second.Owner() != "worker-2" {
		t.Fatalf("second Obtain = %+v, %v; want worker-2 with a token above %d", second, err, first.Token())
	}
	if _, err := c.Obtain(ctx, "other", time.Hour); err == nil || errors.Is(err, client.ErrNotObtained) {
		t.Fatalf("Obtain above max_ttl = %v; want the proxy's error", err)
	}
}

func TestObtainHonoursContext(t *testing.T) {
	c := client.New(proxy(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Obtain(ctx, "job", time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Obtain with a cancelled ctx = %v; want context.Canceled", err)
	}
}

// A session lock needs no Refresh: it outlives its TTL while its
// connection is open, and Release frees it.
func TestSessionLock(t *testing.T) {
	rdb := proxy(t)
	c := client.New(rdb)
	ctx := t.Context()
	const ttl = 3 * time.Second // six of the default session_tick: a busy machine may delay a renewal or two
	lock, err := c.Obtain(ctx, "job", ttl, client.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	if tok, err := c.Token(ctx, "job"); err != nil || tok != lock.Token() {
		t.Fatalf("Token two TTLs later = %d, %v; want %d (renewed by its session)", tok, err, lock.Token())
	}
	if _, err := c.Obtain(ctx, "job", ttl, client.WithSession()); !errors.Is(err, client.ErrNotObtained) {
		t.Fatalf("Obtain of a held session lock = %v; want ErrNotObtained", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lock.Release(ctx); !errors.Is(err, client.ErrLockNotHeld) {
		t.Fatalf("second Release = %v; want ErrLockNotHeld", err)
	}
	if _, err := c.Obtain(ctx, "job", ttl); err != nil {
		t.Fatalf("Obtain after the session lock's release: %v", err)
	}
	other := client.New(doer{rdb})
	if _, err := other.Obtain(ctx, "other", ttl, client.WithSession()); !errors.Is(err, client.ErrNoSession) {
		t.Fatalf("WithSession over a plain Do = %v; want ErrNoSession", err)
	}
}

// doer is a RedisClient that is not a *redis.Client.
type doer struct{ rdb *redis.Client }

func (d doer) Do(ctx context.Context, args ...any) *redis.Cmd { return d.rdb.Do(ctx, args...) }

// WithWait waits in the lock's queue: granted when the holder releases,
// ErrNotObtained when the wait runs out first; a wait longer than the
// client's read timeout still gets its answer.
func TestObtainWithWait(t *testing.T) {
	rdb := proxy(t)
	rdb.Options().ReadTimeout = 2 * time.Second // shorter than the wait across the release below
	c := client.New(rdb)
	ctx := t.Context()
	holder, err := c.Obtain(ctx, "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Obtain(ctx, "job", time.Minute, client.WithWait(200*time.Millisecond)); !errors.Is(err, client.ErrNotObtained) {
		t.Fatalf("Obtain WithWait of a held lock = %v; want ErrNotObtained once the wait ran out", err)
	}
	release := time.AfterFunc(3*time.Second, func() { _ = holder.Release(context.Background()) })
	defer release.Stop()
	next, err := c.Obtain(ctx, "job", time.Minute, client.WithWait(10*time.Second))
	if err != nil {
		t.Fatalf("Obtain WithWait across the holder's release (3s, past the 2s read timeout): %v", err)
	}
	if next.Token() <= holder.Token() {
		t.Fatalf("token %d after %d", next.Token(), holder.Token())
	}
}
