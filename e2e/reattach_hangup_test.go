package e2e

// Findings of helper-67, an adversarial review of 8fc6d5d, 0abb9d4 and
// 68d9317 (re-attach rounds ordered by generation, send time, random part).

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// readHold holds, once armed, the lock read (the getpttl script over a key
// with the given prefix and its note, no arguments) on the link to backend
// only, for d.
func readHold(prefix string, backend int, armed *atomic.Bool, d time.Duration) mitmHook {
	return func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if ok && i == backend && armed.Load() && len(keys) == 2 && len(keys[0]) > len(prefix) && keys[0][:len(prefix)] == prefix && len(argv) == 0 {
			time.Sleep(d)
		}
		return nil
	}
}

// TestReattachHungUpDuringItsReadOverridesTheAnsweredOne: connection X on
// replica R1 holds a session lock. The client re-attaches it on Y (R1),
// whose read of the lock waits for one slow backend (300 ms, node_timeout
// 1 s: no fault), and hangs Y up after 100 ms; then it re-attaches on Z
// (R2), which answers the lock's token. The hang-up cancels Y's context,
// but Engine.read checks it only before it sends, and reattach sends its
// round after readNoted returns without looking at it again. Y's round is
// stamped when the read returns, after Z's: it is of the same (or a later)
// generation and the later send time, so reattach.lua moves every backend
// from Z's round to Y's. The moved callback sees the hang-up and hands Y's
// round to X (adopt); Z's renewals find another round and drop its
// booking; the client leaves X (the lock moved to Z), X's close releases
// the lock (its round matches), and another owner takes it while Z, told
// it holds it, is open.
func TestReattachHungUpDuringItsReadOverridesTheAnsweredOne(t *testing.T) {
	sleepBound(t)
	const prefix, ttl = "attack:read:", 1500
	servers := redistest.Start(t, 3)
	var armed atomic.Bool
	mut := func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
	}
	h1 := replicaThrough(t, servers, readHold(prefix, 0, &armed, 300*time.Millisecond), mut)
	h2 := replicaThrough(t, servers, nil, mut)
	ctx := t.Context()
	warmPair(t, h1.Client(), h2.Client())
	for trial := range 3 {
		key := prefix + strconv.Itoa(trial)
		x := redis.NewClient(&redis.Options{Addr: h1.Addr, PoolSize: 1, MaxRetries: -1})
		token, err := x.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		y := redis.NewClient(&redis.Options{Addr: h1.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 100 * time.Millisecond})
		_ = y.Ping(ctx).Err()
		z := redis.NewClient(&redis.Options{Addr: h2.Addr, PoolSize: 1, MaxRetries: -1})
		defer z.Close()
		_ = z.Ping(ctx).Err()
		armed.Store(true)
		_, yerr := y.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64() // times out: go-redis closes the conn
		_ = y.Close()
		zAt := time.Now()
		ztok, zerr := z.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if zerr != nil || ztok != token {
			t.Fatalf("trial %d: Z answered %d, %v (token %d)", trial, ztok, zerr, token)
		}
		notesZ := review38Notes(h1, key)
		time.Sleep(500 * time.Millisecond) // Y's read returns; its round lands
		armed.Store(false)
		notes := review38Notes(h1, key)
		_ = x.Close() // the lock moved to Z: the client leaves X
		thief := redis.NewClient(&redis.Options{Addr: h2.Addr, MaxRetries: -1})
		defer thief.Close()
		if tok := thiefGets(t, thief, key, 2*ttl*time.Millisecond); tok != 0 {
			t.Fatalf("trial %d: another owner got token %d %v after Z's re-attach was sent (its window: %d ms) while Z (answered token %d after Y hung up (%v), open, no fault) holds the lock; notes after Z %q, after Y's read returned %q",
				trial, tok, time.Since(zAt).Round(time.Millisecond), ttl, ztok, yerr, notesZ, notes)
		}
		t.Logf("trial %d held; notes after Z %q, after Y %q", trial, notesZ, notes)
	}
}

// readAfterReattachHold holds, once armed, on the link to backend only,
// every read of key that follows a re-attach script of key on that link
// (the re-attach's TokenOf, not its first read), for d.
func readAfterReattachHold(key string, backend int, armed *atomic.Bool, d time.Duration) mitmHook {
	var moved atomic.Bool
	return func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if !ok || i != backend || !armed.Load() || len(keys) != 2 || keys[0] != key {
			return nil
		}
		switch {
		case len(argv) == 5 && argv[3] != "" && argv[3][len(argv[3])-1] == '@':
			moved.Store(true)
		case len(argv) == 0 && moved.Load():
			time.Sleep(d)
		}
		return nil
	}
}

// TestReattachHungUpDuringItsTokenReadBindsTheLock: connection X holds a
// session lock. The client re-attaches it on Y, same replica; Y's round
// moves the lock and Y books it, then the reply waits for TokenOf, a read
// that waits for every backend: one link is slow (300 ms, node_timeout
// 1 s: no fault). The client times out at 100 ms and hangs Y up: the lock
// was Y's once the round was sent, and Y's close releases it at once; X's
// close then releases nothing (helper-67 saw this release as a loss of X's
// lock, under an earlier contract).
func TestReattachHungUpDuringItsTokenReadBindsTheLock(t *testing.T) {
	const key, ttl = "attack:late-hangup", 10000 // ms: an expiry would take this long
	servers := redistest.Start(t, 3)
	var armed atomic.Bool
	h := replicaThrough(t, servers, readAfterReattachHold(key, 0, &armed, 300*time.Millisecond), func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
	})
	ctx := t.Context()
	warm := h.Client()
	harness.Eventually(t, "ready", func() bool {
		_, err := warm.Do(ctx, "LOCK.ACQUIRE", "attack:warm", "w", 5000).Int64()
		return err == nil
	})
	x := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer x.Close()
	token, err := x.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	y := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 100 * time.Millisecond})
	_ = y.Ping(ctx).Err()
	armed.Store(true)
	_, yerr := y.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64() // times out client-side: go-redis closes the conn
	_ = y.Close()
	time.Sleep(400 * time.Millisecond)
	armed.Store(false)
	releasedAtYsClose(t, h.Addr, x, key, ttl, yerr, token)
}

// releasedAtYsClose checks the re-attach contract after connection Y,
// which re-attached key and hung up, closed: the lock was Y's, so Y's
// close released it (another owner gets it within 3 s, long before its
// TTL of ttl ms), and X, which held it before, releases nothing at its
// own close.
func releasedAtYsClose(t *testing.T, addr string, x *redis.Client, key string, ttl int, yerr error, token int64) {
	t.Helper()
	ctx := t.Context()
	thief := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer thief.Close()
	tok := thiefGets(t, thief, key, 3*time.Second)
	if tok == 0 {
		t.Fatalf("no other owner got the lock within 3 s of Y's close (TTL %d ms): Y's re-attach (answered %v) moved the lock to Y, whose close releases it; X's LOCK.TOKEN: %v",
			ttl, yerr, x.Do(ctx, "LOCK.TOKEN", key).Val())
	}
	_ = x.Close()
	time.Sleep(300 * time.Millisecond)
	if n, err := thief.Do(ctx, "LOCK.EXTEND", key, "thief", 5000).Int64(); err != nil || n != 1 {
		t.Fatalf("the new owner's LOCK.EXTEND after X's close = %d, %v; want 1 (token %d, X had %d)", n, err, tok, token)
	}
}
