package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// bsm/redislock v0.10's scripts by SHA1 (CLIENTS.md): these tests send what
// v0.10 sends on the wire, EVALSHA with its KEYS and ARGV, reading nil as
// failure and anything else as success, and look at the backends; the real
// client runs in TestBsmRedislockV10Client (the tests' module uses v0.9.4).
const (
	bsmV10Refresh = "5a22d7e8431313862816d4416b5e46dd70fc340d" // KEYS; ARGV value, ms
	bsmV10Release = "9470c810040e272ee6c579d8d4331aaf6332a7b1" // KEYS; ARGV value
	bsmV10PTTL    = "66e1084c2d842a7e8c271925aae90219fac4e129" // KEYS; ARGV value
)

// bsm10 runs one v0.10 script by SHA1: its reply, or ok false for nil.
func bsm10(ctx context.Context, t *testing.T, c *redis.Client, sha string, keys []string, args ...any) (reply any, ok bool) {
	t.Helper()
	reply, err := c.EvalSha(ctx, sha, keys, args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("EVALSHA %s %q %v = %v", sha[:8], keys, args, err)
	}
	return reply, true
}

// TestBsmRedislockV10 serves bsm/redislock v0.10's obtain (multi-key, all
// or nothing, re-obtain by token), refresh, release and pttl natively, with
// no registration. Before: ERR unknown script at the first obtain.
func TestBsmRedislockV10(t *testing.T) {
	h := harness.New(t, 5, nil)
	c, ctx := h.Client(), t.Context()
	keys := []string{"b10:a", "b10:b", "b10:c"}

	// token "tokA", metadata "-m1": obtains all three keys.
	if r, ok := bsm10(ctx, t, c, bsmV10Obtain, keys, "tokA-m1", 4, 5000); !ok || r != "OK" {
		t.Fatalf("obtain = %v, %v; want OK", r, ok)
	}
	// Another token on an overlapping set: nothing, and b10:d stays free.
	if r, ok := bsm10(ctx, t, c, bsmV10Obtain, []string{"b10:d", "b10:b"}, "tokB-m1", 4, 5000); ok {
		t.Fatalf("obtain of a held key by another token = %v; want nil", r)
	}
	if harness.AnyKey(t, h.Backend, "b10:d") {
		t.Fatal("a refused multi-key obtain left b10:d behind")
	}
	// The same token, new metadata: re-obtained, the value replaced on a quorum.
	if r, ok := bsm10(ctx, t, c, bsmV10Obtain, keys, "tokA-m2", 4, 8000); !ok || r != "OK" {
		t.Fatalf("re-obtain with the same token = %v, %v; want OK", r, ok)
	}
	for _, k := range keys {
		if n := h.Holders(k, "tokA-m2"); n < 3 {
			t.Fatalf("%s holds the new value on %d of 5 backends", k, n)
		}
	}
	// A token sharing a shorter prefix is another token: "tok" + "A-m2" is
	// the value, but token length 4 compares "tokX".
	if r, ok := bsm10(ctx, t, c, bsmV10Obtain, keys, "tokX-m2", 4, 8000); ok {
		t.Fatalf("obtain by another token = %v; want nil", r)
	}
	if r, ok := bsm10(ctx, t, c, bsmV10PTTL, keys, "tokA-m2"); !ok || r.(int64) <= 6000 || r.(int64) > 8000 {
		t.Fatalf("pttl = %v, %v; want about 8000", r, ok)
	}
	if r, ok := bsm10(ctx, t, c, bsmV10PTTL, keys, "tokA-m1"); ok {
		t.Fatalf("pttl of the old value = %v; want nil", r)
	}
	if r, ok := bsm10(ctx, t, c, bsmV10Refresh, keys, "tokA-m2", 20000); !ok || r != "OK" {
		t.Fatalf("refresh = %v, %v; want OK", r, ok)
	}
	if pttl := c.PTTL(ctx, "b10:c").Val(); pttl < 15*time.Second {
		t.Fatalf("PTTL after refresh = %v", pttl)
	}
	if r, ok := bsm10(ctx, t, c, bsmV10Refresh, keys, "tokB-m1", 20000); ok {
		t.Fatalf("refresh by another value = %v; want nil", r)
	}
	// A release naming a key not held releases nothing.
	if r, ok := bsm10(ctx, t, c, bsmV10Release, append(keys, "b10:e"), "tokA-m2"); ok {
		t.Fatalf("release with a key not held = %v; want nil", r)
	}
	if n := h.Holders("b10:a", "tokA-m2"); n < 3 {
		t.Fatalf("a refused release freed b10:a (%d holders)", n)
	}
	if r, ok := bsm10(ctx, t, c, bsmV10Release, keys, "tokA-m2"); !ok || r != "OK" {
		t.Fatalf("release = %v, %v; want OK", r, ok)
	}
	for _, k := range keys {
		if harness.AnyKey(t, h.Backend, k) {
			t.Fatalf("%s left after release", k)
		}
	}
	if r, ok := bsm10(ctx, t, c, bsmV10PTTL, keys, "tokA-m2"); ok {
		t.Fatalf("pttl after release = %v; want nil", r)
	}
}

// TestBsmRedislockV10Concurrent: 100 goroutines obtain one lock with v0.10's
// obtain: exactly one wins.
func TestBsmRedislockV10Concurrent(t *testing.T) {
	h := harness.New(t, 5, nil)
	c := h.Client()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  int
		errs []error
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := fmt.Sprintf("tok%03d", i)
			err := c.EvalSha(t.Context(), bsmV10Obtain, []string{"b10:race"}, token+"meta", len(token), 30000).Err()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, redis.Nil):
				if len(errs) < 3 {
					errs = append(errs, err)
				}
			}
		}()
	}
	wg.Wait()
	if won != 1 || len(errs) != 0 {
		t.Fatalf("%d of 100 concurrent obtains won (errors %v); want exactly 1", won, errs)
	}
}

// TestBsmRedislockTokenReobtain: bsm/redislock v0.9.4 re-obtains a lock
// held under the same token with new metadata (its script compares the
// token, a prefix of the value); another token is refused. Before: the
// proxy compared the whole value and refused the re-obtain.
func TestBsmRedislockTokenReobtain(t *testing.T) {
	h := harness.New(t, 5, nil)
	locker, ctx := redislock.New(h.Client()), t.Context()
	lock, err := locker.Obtain(ctx, "bsm:re", 5*time.Second, &redislock.Options{Token: "tok-1", Metadata: "first"})
	if err != nil {
		t.Fatalf("Obtain = %v", err)
	}
	again, err := locker.Obtain(ctx, "bsm:re", 9*time.Second, &redislock.Options{Token: "tok-1", Metadata: "second"})
	if err != nil {
		t.Fatalf("re-Obtain with the same token, new metadata = %v", err)
	}
	if again.Metadata() != "second" || h.Holders("bsm:re", "tok-1second") < 3 {
		t.Fatalf("re-obtained lock: metadata %q, held by tok-1second on %d backends", again.Metadata(), h.Holders("bsm:re", "tok-1second"))
	}
	if ttl, err := again.TTL(ctx); err != nil || ttl <= 7*time.Second {
		t.Fatalf("TTL after the re-obtain = %v, %v; want about 9s", ttl, err)
	}
	if _, err := locker.Obtain(ctx, "bsm:re", time.Second, &redislock.Options{Token: "tok-2", Metadata: "first"}); !errors.Is(err, redislock.ErrNotObtained) {
		t.Fatalf("Obtain with another token = %v; want ErrNotObtained", err)
	}
	if err := lock.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
		t.Fatalf("Release of the first value = %v; want ErrLockNotHeld (the value was replaced)", err)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatalf("Release = %v", err)
	}
	if h.Holders("bsm:re", "tok-1second") > 0 {
		t.Fatal("the lock is still held after Release")
	}
}
