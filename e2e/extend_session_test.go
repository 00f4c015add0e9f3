package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// sessionLocks is INFO's session_locks on c's replica.
func sessionLocks(t *testing.T, c *redis.Client) string {
	info, err := c.Info(t.Context(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "session_locks:"); ok {
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
