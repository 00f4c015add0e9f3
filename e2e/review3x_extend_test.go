package e2e

// Review 3x of 35cf43d (extends and sessions) and 1ae83e4 (refusal
// back-off): each test fails while the bug it names exists.

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// TestReview3xFailedExtendKeepsTheSession: an extend from another
// connection takes a session lock out of its session only because it
// promised its caller a window (extendLock: "a timed lock whose window is
// the one this extend promised"). An extend whose reply lapsed promised
// nothing (it is answered NOQUORUM), yet its round already noted a new
// round on the backends and extendLock unbooked the lock: the holder's
// connection, open and never told anything, no longer renews it, and it
// expires with the failed extend's 300 ms. A third client takes it.
func TestReview3xFailedExtendKeepsTheSession(t *testing.T) {
	sleepBound(t)
	for _, where := range []string{"same-replica", "other-replica"} {
		t.Run(where, func(t *testing.T) {
			h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay = 0 })
			ctx := t.Context()
			a, b, blocker, c := oneConn(h), oneConn(h), oneConn(h), oneConn(h)
			if where == "other-replica" { // the holder's replica renews by its round; the extend moved it
				_, addr2 := h.Serve()
				b = h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			}
			key, slow := "review3x:failext:"+where, "review3x:failext:slow:"+where
			if err := blocker.Do(ctx, "SET", slow, "b", "NX", "PX", 30000).Err(); err != nil {
				t.Fatal(err)
			}
			if err := a.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 1500, "SESSION").Err(); err != nil {
				t.Fatal(err)
			}
			p := b.Pipeline()
			ext := p.Do(ctx, "LOCK.EXTEND", key, "tokA", 300)
			p.Do(ctx, "LOCK.ACQUIRE", slow, "w", 30000, "WAIT", 1000) // past the extend's 300 ms
			_, _ = p.Exec(ctx)
			if ext.Err() == nil {
				t.Skipf("the extend was answered %v: it promised 300 ms", ext.Val())
			}
			t.Logf("extend from another connection: %v; session_locks %s", ext.Err(), sessionLocks(t, c))
			start := time.Now()
			for time.Since(start) < 4*time.Second {
				if ok, err := c.SetNX(ctx, key, "tokC", 60*time.Second).Result(); err == nil && ok {
					t.Fatalf("another client took the session lock %v after a failed extend from another connection (its holder's connection open; session_locks %s)",
						time.Since(start).Round(time.Millisecond), sessionLocks(t, c))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := a.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReview3xFailedMultiKeyExtendKeepsTheSession: node-redlock's
// multi-key extend answers 0 and changes nothing on one Redis when any key
// is not held. allKeys extends key by key and stops at the first not held:
// the keys before it were extended by Engine.Extend, which (35cf43d) moves
// them out of their sessions, and unbooked, under a reply of 0 that
// promised nothing. The bound lock's holder, connected, never told, loses
// it after the failed call's 300 ms: a third client takes it.
func TestReview3xFailedMultiKeyExtendKeepsTheSession(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"bound", "session"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay, c.LockDelay = 0, 0 })
			ctx := t.Context()
			a, b, c := oneConn(h), oneConn(h), oneConn(h)
			k1, k2 := "review3x:multi:"+how+":1", "review3x:multi:"+how+":2"
			acquire := []any{"SET", k1, "tokA", "NX"}
			if how == "session" {
				acquire = []any{"LOCK.ACQUIRE", k1, "tokA", 1500, "SESSION"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := b.Eval(ctx, clientScript(t, shaRedlock5Ext), []string{k1, k2}, "tokA", 300).Int()
			if err != nil || n != 0 {
				t.Skipf("multi-key extend with one key not held = %d, %v; want 0", n, err)
			}
			t.Logf("multi-key extend = 0; session_locks %s", sessionLocks(t, c))
			start := time.Now()
			for time.Since(start) < 4*time.Second {
				if ok, err := c.SetNX(ctx, k1, "tokC", 60*time.Second).Result(); err == nil && ok {
					t.Fatalf("another client took the %s lock %v after a multi-key extend answered 0 (its holder's connection open; session_locks %s)",
						how, time.Since(start).Round(time.Millisecond), sessionLocks(t, c))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := a.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
