package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview37OverwriteFromElsewhereKeepsItsWindow: SET XX PX with the
// holder's own value (ShedLock keeping its lock until lockAtLeastFor) from
// another connection, through another replica, answers OK for its TTL. It
// keeps the lock's round, so a connection-bound lock stays in its
// session; the close of the booking connection must still leave the lock
// to the TTL the overwrite promised. Before the overwrite pinned its
// promise, the close released it and another client took it 1 ms later.
func TestReview37OverwriteFromElsewhereKeepsItsWindow(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"bound", "session"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarness(t)
			ctx := t.Context()
			_, addr2 := h.Serve()
			a := oneConn(h)
			b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			c := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			key := "review37:setxx:" + how
			acquire := []any{"SET", key, "tokA", "NX"}
			if how == "session" {
				acquire = []any{"LOCK.ACQUIRE", key, "tokA", 1500, "SESSION"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := b.Do(ctx, "SET", key, "tokA", "XX", "PX", 4000).Err(); err != nil {
				t.Fatalf("SET XX PX 4000 with the holder's value from another replica: %v; want OK", err)
			}
			overwritten := time.Now()
			_ = a.Close()
			for time.Since(overwritten) < 3*time.Second { // well inside the 4 s promised
				if ok, err := c.SetNX(ctx, key, "tokC", time.Minute).Result(); err == nil && ok {
					t.Fatalf("another client took the lock %v after SET XX PX 4000 answered OK (%s, holder's connection closed)",
						time.Since(overwritten).Round(time.Millisecond), how)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestReview37PinnedBoundLockShowsItsTTLAfterClose: a connection-bound
// lock shows PTTL -1 while its connection lives (no expiry, as on one
// Redis). When its connection closes inside the window an extend from
// elsewhere promised, the lock lives on as a timed lock, and reads must
// say so: its TTL, not -1 (a client that waits out the TTL it reads would
// otherwise wait forever or take -1 for "no lock").
func TestReview37PinnedBoundLockShowsItsTTLAfterClose(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	_, addr2 := h.Serve()
	a := oneConn(h)
	b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
	const key = "review37:pttl"
	if err := a.Do(ctx, "SET", key, "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	if ms := b.PTTL(ctx, key).Val(); ms != -1*time.Millisecond && ms != -1 {
		t.Fatalf("PTTL of a connection-bound lock = %v; want -1", ms)
	}
	if err := b.Do(ctx, "SET", key, "tokA", "XX", "PX", 5000).Err(); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	deadline := time.Now().Add(3 * sessionTick)
	for {
		ms, err := b.PTTL(ctx, key).Result()
		if err == nil && ms > 0 && ms <= 5*time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PTTL of the pinned lock after its connection closed = %v, %v; want its TTL (0 < ms <= 5000)", ms, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReview37StalePinKeepsALaterLock: a pin names the value an extend
// promised a window to. An overwrite with another value ends that
// holder's lock; its pin must go with it, or a later connection-bound lock
// that reuses the value (a client with a fixed lock value, as many have)
// would outlive its own close by the old pin's TTL.
func TestReview37StalePinKeepsALaterLock(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	_, addr2 := h.Serve()
	b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
	const key = "review37:stale"
	a := oneConn(h)
	if err := a.Do(ctx, "SET", key, "fixed", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Eval(ctx, harness.ExtendScript, []string{key}, "fixed", 60000).Int(); err != nil || n != 1 { // pins "fixed" for 60 s
		t.Fatalf("extend from elsewhere = %d, %v; want 1", n, err)
	}
	if err := b.Do(ctx, "SET", key, "other", "XX", "PX", 200).Err(); err != nil { // another owner, briefly
		t.Fatal(err)
	}
	_ = a.Close()
	time.Sleep(400 * time.Millisecond) // "other" expires
	a2 := oneConn(h)
	if err := a2.Do(ctx, "SET", key, "fixed", "NX").Err(); err != nil {
		t.Fatalf("the lock after the other owner's expired: %v", err)
	}
	_ = a2.Close()
	deadline := time.Now().Add(boundLease * 3 / 5) // released at the close, not left to its TTL
	for {
		if ok, err := b.SetNX(ctx, key, "tokC", time.Minute).Result(); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a connection-bound lock outlived its close: the pin an earlier owner of its value left kept it")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReview37FailedMultiKeyExtendPinsNothing: node-redlock's multi-key
// extend answers 0 and changes nothing when a key is not held. Extending
// key by key, the keys before the one not held were extended from another
// connection, which pins their promise: the holder's close then left the
// lock for the failed call's TTL. The keys are read first, and nothing is
// extended when one is not held.
func TestReview37FailedMultiKeyExtendPinsNothing(t *testing.T) {
	h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay, c.LockDelay = 0, 0 })
	ctx := t.Context()
	a, b, c := oneConn(h), oneConn(h), oneConn(h)
	k1, k2 := "review37:multi:1", "review37:multi:2"
	if err := a.Do(ctx, "SET", k1, "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	n, err := b.Eval(ctx, clientScript(t, shaRedlock5Ext), []string{k1, k2}, "tokA", 60000).Int()
	if err != nil || n != 0 {
		t.Fatalf("multi-key extend with one key not held = %d, %v; want 0", n, err)
	}
	_ = a.Close()
	deadline := time.Now().Add(boundLease * 3 / 5) // released at the close, not left to a promise nobody was given
	for {
		if ok, err := c.SetNX(ctx, k1, "tokC", time.Minute).Result(); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock outlived its holder's close: a multi-key extend that answered 0 pinned it")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
