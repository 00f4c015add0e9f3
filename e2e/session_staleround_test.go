package e2e

// Helper-75 (adversarial, real process faults): a re-attach made while one
// backend is SIGSTOPped leaves that backend holding the lock under the old
// round once it resumes. The new connection's renewals name the new round:
// they neither extend it there (another round) nor restore it (the key is
// present), so the lock stays on a bare quorum for the old copy's TTL plus
// its lock-delay. A second, single fault in that window (another backend
// restarted empty) loses the session lock although its connection is open,
// its replica alive and two of three backends healthy; README: "a lock
// left on a bare quorum by one fault is back on every backend a tick or two
// later and survives the next fault".

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestReattachDuringPauseKeepsTheLockRenewed(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick = 250 * time.Millisecond
		c.NodeTimeout = 500 * time.Millisecond
	})
	_, addrB := h.Serve()
	const key = "pausedbackend:stale"
	const ttl = 6000
	_, t2 := reattachedWhileBackend2Paused(t, h, addrB, key, ttl)
	t.Logf("notes after resume: %q", review38Notes(h, key))

	// One more fault: backend 0 restarts empty. Backends 1 and 2 are healthy,
	// replica B is alive and the connection the lock moved to is open.
	h.Backend[0].Restart()
	t.Logf("notes after restart: %q", review38Notes(h, key))
	admin := replicaAt(t, addrB)
	deadline := time.Now().Add(2 * ttl * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := sessionLocks(t, admin); n != "1" {
			t.Fatalf("the session lock re-attached to B (token %d) left B's book (session_locks %s, session_lost %s) while B's connection is open, replica B alive and backends 1, 2 healthy (notes %q, holders %d)",
				t2, n, infoStat(t, admin, "session_lost"), review38Notes(h, key), h.Holders(key, "o"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReattachDuringPauseThenRestartKeepsOthersOut: the same with the shipped
// restart quarantine on (max_ttl 7 s): the restarted backend does not count,
// yet the session lock B was answered is lost, and another owner takes the
// key while B's connection is still open and replica B alive.
func TestReattachDuringPauseThenRestartKeepsOthersOut(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick = 250 * time.Millisecond
		c.NodeTimeout = 500 * time.Millisecond
		c.Quarantine, c.MaxTTL = true, 7*time.Second
	})
	_, addrB := h.Serve()
	ctx := context.Background()
	const key = "pausedbackend:stale-thief"
	const ttl = 6000
	b, t2 := reattachedWhileBackend2Paused(t, h, addrB, key, ttl)
	h.Backend[0].Restart() // empty: quarantined
	thief := replicaAt(t, h.Addr)
	adminB := replicaAt(t, addrB)
	deadline := time.Now().Add(25 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if i%10 == 0 {
			t.Logf("session_locks %s lost %s notes %q holders %d", sessionLocks(t, adminB), infoStat(t, adminB, "session_lost"), review38Notes(h, key), h.Holders(key, "o"))
		}
		if ok, err := thief.SetNX(ctx, key, "thief", 5*time.Second).Result(); err == nil && ok {
			t.Fatalf("another owner took the lock while B's connection (re-attached, token %d) is open and replica B alive (session_lost on B %s; notes %q)",
				t2, infoStat(t, replicaAt(t, addrB), "session_lost"), review38Notes(h, key))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := b.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestPausePastTTLThenRestartKeepsTheSession: no re-attach. A plain session
// lock; backend 2 is SIGSTOPped past the lock's TTL, then resumed: its key
// expired, its note (the lock-delay) stays, so the renewals do not put the
// lock back there for the lock-delay (5 s). README lists "paused past the
// TTL" among the faults a renewal repairs "a tick or two later", after which
// the lock "survives the next fault". Backend 0 restarting empty 1 s after
// the resume loses the lock while its connection is open.
func TestPausePastTTLThenRestartKeepsTheSession(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick = 250 * time.Millisecond
		c.NodeTimeout = 500 * time.Millisecond
	})
	ctx := context.Background()
	const key = "pausedbackend:pausepast"
	const ttl = 3000
	a := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer a.Close()
	if err := a.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Err(); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "o") == 3 })
	h.Backend[2].Pause()
	time.Sleep(4 * time.Second) // past the TTL
	h.Backend[2].Resume()
	time.Sleep(1500 * time.Millisecond) // six ticks: "back on every backend a tick or two later"
	t.Logf("holders after resume + 1.5 s: %d, notes %q", h.Holders(key, "o"), review38Notes(h, key))
	h.Backend[0].Restart()
	admin := replicaAt(t, h.Addr)
	deadline := time.Now().Add(2 * ttl * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := sessionLocks(t, admin); n != "1" {
			t.Fatalf("the session lock left the book (session_locks %s, session_lost %s) while its connection is open, its replica alive and backends 1, 2 healthy (notes %q, holders %d)",
				n, infoStat(t, admin, "session_lost"), review38Notes(h, key), h.Holders(key, "o"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reattachedWhileBackend2Paused takes key's session lock through replica A
// (h.Addr, retrying while the backends are in their first quarantine),
// pauses backend 2 past node_timeout, re-attaches the lock through replica
// B at addrB (its round misses backend 2), resumes backend 2 and leaves the
// renewals 1.5 s: B's connection, which holds the lock, and its token.
func reattachedWhileBackend2Paused(t *testing.T, h *harness.Harness, addrB, key string, ttl int) (*redis.Client, int64) {
	t.Helper()
	ctx := t.Context()
	a := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { _ = a.Close() })
	var t1 int64
	harness.Eventually(t, "the session lock (backends out of their first quarantine)", func() bool {
		var err error
		t1, err = a.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		return err == nil
	})
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "o") == 3 })

	h.Backend[2].Pause()
	time.Sleep(1500 * time.Millisecond) // past node_timeout
	b := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = b.Close() })
	t2, err := b.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
	if err != nil || t2 != t1 {
		t.Fatalf("re-attach through replica B with backend 2 paused = %d, %v; want %d", t2, err, t1)
	}
	time.Sleep(500 * time.Millisecond)
	h.Backend[2].Resume()
	time.Sleep(1500 * time.Millisecond) // the replicas see backend 2 again; renewals run
	return b, t2
}
