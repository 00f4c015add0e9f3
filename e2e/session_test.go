package e2e

// Connection-bound locks (LOCK.ACQUIRE ... SESSION): renewed while their
// connection is open, released when it closes, left to expire when their
// replica dies, never renewed once lost.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

const sessionTick = 500 * time.Millisecond

// infoInt reads one integer field of a replica's INFO.
func infoInt(t *testing.T, c redis.Cmdable, field string) int64 {
	t.Helper()
	info, err := c.Info(context.Background()).Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s = %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// TestSessionLocks: 40 session locks of one connection outlive their TTL
// twice over, renewed in batched rounds (not one round per lock); a
// released one is no longer renewed; closing the connection releases the
// rest within one renewal tick.
func TestSessionLocks(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = sessionTick })
	ctx := t.Context()
	rdb := h.Client()
	// Its own client with one connection: closing a go-redis Conn only
	// returns it to the pool, closing the client closes the socket.
	conn := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	const n, ttl = 40, 3 * time.Second
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("session:", i)
		if err := conn.Do(ctx, "LOCK.ACQUIRE", keys[i], "me", ttl.Milliseconds(), "SESSION").Err(); err != nil {
			t.Fatalf("LOCK.ACQUIRE %s SESSION: %v", keys[i], err)
		}
	}
	if got := infoInt(t, rdb, "session_locks"); got != n {
		t.Fatalf("session_locks = %d, want %d", got, n)
	}
	time.Sleep(2 * ttl)
	for _, k := range keys {
		if got := h.Holders(k, "me"); got < 2 {
			t.Fatalf("%s held on %d of 3 backends two TTLs after its acquire; want a quorum (renewed)", k, got)
		}
	}
	rounds, renewed := infoInt(t, rdb, "session_renewal_rounds"), infoInt(t, rdb, "session_renewed")
	if renewed < 2*n || rounds*10 > renewed {
		t.Fatalf("%d renewals in %d rounds; want each lock renewed at least twice, ten or more locks a round", renewed, rounds)
	}
	t.Logf("%d renewals of %d session locks in %d batched rounds", renewed, n, rounds)

	// A session lock released by its holder is out of the book at once.
	if got, err := conn.Do(ctx, "LOCK.RELEASE", keys[0], "me").Int64(); err != nil || got != 1 {
		t.Fatalf("LOCK.RELEASE of a session lock = %d, %v", got, err)
	}
	if got := infoInt(t, rdb, "session_locks"); got != n-1 {
		t.Fatalf("session_locks after a release = %d, want %d", got, n-1)
	}

	// Closing the connection releases the others within one tick.
	closed := time.Now()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[1:] {
		for harness.AnyKey(t, h.Backend, k) {
			if time.Since(closed) > sessionTick {
				t.Fatalf("%s still on a backend %v after its connection closed; want released within one tick (%v)",
					k, time.Since(closed), sessionTick)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("released %d session locks %v after their connection closed", n-1, time.Since(closed))
	if got := infoInt(t, rdb, "session_released"); got != n-1 {
		t.Fatalf("session_released = %d, want %d", got, n-1)
	}
}

// TestSessionLockOfADeadReplica: the replica holding the connection is
// killed (SIGKILL: nothing is released); the lock expires within its TTL
// and another replica's client gets it. A replica paused past its session
// locks' TTL does not renew them when it resumes: one taken over meanwhile
// stays the new owner's, one nobody took stays free, both count as lost.
func TestSessionLockOfADeadReplica(t *testing.T) {
	sleepBound(t)
	backends := redistest.Start(t, 3)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Quarantine = false
	cfg.SessionTick = sessionTick
	cfg.NativeLockDelay = 0 // an expired session lock is free at once (TestLockDelay plays the delay)
	for _, addr := range redistest.Addrs(backends) {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: addr})
	}
	h := harness.Of(t, backends, cfg)
	h.App, h.Addr = h.Serve()
	other := h.Client()
	ctx := t.Context()
	const ttl = 3 * time.Second

	childAddr, child := childReplica(t, cfg)
	waitUsable(t, childAddr)
	held := redis.NewClient(&redis.Options{Addr: childAddr, MaxRetries: -1, PoolSize: 1})
	defer held.Close()
	for _, k := range []string{"taken-over", "left-alone"} {
		if err := held.Do(ctx, "LOCK.ACQUIRE", k, "paused", ttl.Milliseconds(), "SESSION").Err(); err != nil {
			t.Fatalf("LOCK.ACQUIRE %s SESSION on the child replica: %v", k, err)
		}
	}
	time.Sleep(ttl + sessionTick) // renewed past its first TTL
	if h.Holders("left-alone", "paused") < 2 {
		t.Fatal("a session lock of a live connection expired")
	}

	// Paused past the TTL: the locks expire; one is taken over.
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	harness.Eventually(t, "the paused replica's lock to expire", func() bool {
		return !harness.AnyKey(t, backends, "taken-over")
	})
	if waited := time.Since(stopped); waited > e2ePadded(ttl) {
		t.Errorf("the lock expired %v after its replica stopped; want within its padded TTL", waited)
	}
	if err := other.Do(ctx, "LOCK.ACQUIRE", "taken-over", "new-owner", 60000).Err(); err != nil {
		t.Fatalf("LOCK.ACQUIRE of the expired session lock: %v", err)
	}
	harness.Eventually(t, "the other lock to expire", func() bool { return !harness.AnyKey(t, backends, "left-alone") })
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * sessionTick) // the renewer's ticks run
	if got := infoInt(t, held, "session_lost"); got != 2 {
		t.Fatalf("session_lost = %d after a pause past the TTL; want 2", got)
	}
	if got := h.Holders("taken-over", "new-owner"); got != 3 {
		t.Fatalf("the new owner holds its lock on %d backends after the paused replica resumed; want 3", got)
	}
	if harness.AnyKey(t, backends, "left-alone") {
		t.Fatal("the resumed replica brought back a lost session lock")
	}
	if got, err := held.Do(ctx, "LOCK.EXTEND", "left-alone", "paused", ttl.Milliseconds()).Int64(); err != nil || got != 0 {
		t.Fatalf("LOCK.EXTEND of the lost lock = %d, %v; want 0", got, err)
	}

	// Killed: nothing releases the lock; it expires with its TTL.
	if err := held.Do(ctx, "LOCK.ACQUIRE", "killed", "gone", ttl.Milliseconds(), "SESSION").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * sessionTick)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	harness.Eventually(t, "the killed replica's session lock to expire", func() bool {
		return !harness.AnyKey(t, backends, "killed")
	})
	if waited := time.Since(killed); waited > e2ePadded(ttl) {
		t.Errorf("the lock expired %v after its replica was killed; want within its padded TTL", waited)
	}
	if err := other.Do(ctx, "LOCK.ACQUIRE", "killed", "next", 60000).Err(); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	} else if err != nil {
		t.Fatal("the killed replica's lock could not be taken once it expired")
	}
}

// e2ePadded is a TTL padded as the engine pads it (drift factor 0.01, 2 ms),
// plus room for the poll on a loaded machine (far less than a renewal
// would add: a renewed lock would live a whole TTL more).
func e2ePadded(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)/0.99) + 2*time.Millisecond + 300*time.Millisecond
}
