package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// sessionLocks is INFO's session_locks on c's replica.
func sessionLocks(t *testing.T, c *redis.Client) string { return infoStat(t, c, "session_locks") }

// infoStat is INFO's stat name on c's replica ("?" when absent).
func infoStat(t *testing.T, c *redis.Client, name string) string {
	info, err := c.Info(t.Context(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return "?"
}

// An extend from the connection that booked a session (or connection-bound)
// lock keeps it that connection's: renewed while it lives (a renewal never
// shortens the window the extend promised), released when it closes. An
// extend from anywhere else takes it out of the session
// (TestReview31ExtendedBoundLockKeepsItsWindow).
func TestExtendOnItsOwnConnectionKeepsTheSession(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"session", "bound"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarness(t)
			ctx := t.Context()
			a, other := oneConn(h), oneConn(h)
			key := "ext-own:" + how
			acquire := []any{"LOCK.ACQUIRE", key, "tokA", 1500, "SESSION"}
			if how == "bound" {
				acquire = []any{"SET", key, "tokA", "NX"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := a.Eval(ctx, harness.ExtendScript, []string{key}, "tokA", 30000).Int(); err != nil || n != 1 {
				t.Fatalf("extend on its own connection = %d, %v; want 1", n, err)
			}
			time.Sleep(4 * sessionTick) // renewals run meanwhile
			if n := sessionLocks(t, other); n != "1" {
				t.Fatalf("session_locks %s after the holder's own extend; want 1 (still its session lock)", n)
			}
			for i, b := range h.Backend {
				if ms := b.Client().PTTL(ctx, key).Val(); ms < 25*time.Second {
					t.Errorf("backend %d: TTL %v after renewals; want the 30 s the extend promised, never shortened", i, ms)
				}
			}
			_ = a.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				ok, err := other.SetNX(ctx, key, "tokB", 10*time.Second).Result()
				if err == nil && ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the lock was not released when its connection closed: %v %v", ok, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// An extend from another connection or replica leaves the lock in its
// session: it never shortens it (an extend to 300 ms of a lock renewed for
// 1.5 s), the holder's replica keeps renewing it while the holder is
// connected, and once the window the extend promised is over, the holder's
// close releases it at once. (Its close inside that window leaves the lock
// to it: TestReview31ExtendedBoundLockKeepsItsWindow.)
func TestExtendFromElsewhereKeepsTheSession(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"session", "bound"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay, c.LockDelay = 0, 0 })
			ctx := t.Context()
			_, addr2 := h.Serve()
			a, c := oneConn(h), oneConn(h)
			b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			key := "ext-elsewhere:" + how
			acquire := []any{"LOCK.ACQUIRE", key, "tokA", 1500, "SESSION"}
			if how == "bound" {
				acquire = []any{"SET", key, "tokA", "NX"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := b.Eval(ctx, harness.ExtendScript, []string{key}, "tokA", 300).Int(); err != nil || n != 1 {
				t.Fatalf("extend to 300 ms from another replica = %d, %v; want 1", n, err)
			}
			for i, be := range h.Backend {
				if ms := be.Client().PTTL(ctx, key).Val(); ms < 700*time.Millisecond {
					t.Errorf("backend %d: TTL %v after an extend to 300 ms; want the session's longer TTL kept", i, ms)
				}
			}
			start := time.Now()
			for time.Since(start) < 6*sessionTick {
				if ok, err := c.SetNX(ctx, key, "tokC", time.Minute).Result(); err == nil && ok {
					t.Fatalf("another client took the lock %v after an extend from elsewhere, its holder connected (session_locks %s)",
						time.Since(start).Round(time.Millisecond), sessionLocks(t, c))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if n := sessionLocks(t, c); n != "1" {
				t.Fatalf("session_locks %s on the holder's replica; want 1 (still its session lock)", n)
			}
			_ = a.Close()
			deadline := time.Now().Add(3 * sessionTick)
			for {
				ok, err := c.SetNX(ctx, key, "tokC", time.Minute).Result()
				if err == nil && ok {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the lock was not released at its holder's close, the extend's window long over: %v %v", ok, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
