package e2e

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// reattachLanding delays, once armed, the re-attach script of key on the
// links to the backends in after (index → delay): a re-attach round is the
// 5-argument script over the key and its note whose round ends in "@" (a
// session's; the renewals carry 6 or more arguments).
func reattachLanding(key string, armed *atomic.Bool, after map[int]time.Duration) mitmHook {
	return func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if d := after[i]; ok && d > 0 && armed.Load() && len(keys) == 2 && keys[0] == key && len(argv) == 5 && strings.HasSuffix(argv[3], "@") {
			time.Sleep(d)
		}
		return nil
	}
}

// TestConcurrentReattachesThroughTwoReplicasKeepTheLock: the holder of a
// session lock re-attaches it through two replicas at once (a client
// retrying through a load balancer). Both read the lock (one round, one
// token), and both rounds succeed: each lands first on two of the four
// backends and last on the other two. Before re-attaches were ordered, each
// backend named whichever round landed there last: two and two, so neither
// replica's renewals reached a quorum (three), and the lock expired while
// both connections, each told it holds the lock, were open. A re-attach
// round now moves a backend only from an earlier one: the later of the two
// names every backend, or the earlier one fails and reads again.
func TestConcurrentReattachesThroughTwoReplicasKeepTheLock(t *testing.T) {
	sleepBound(t)
	const key, ttl = "reattach:order", 3000 // ms
	servers := redistest.Start(t, 4)
	var armed atomic.Bool
	mutate := func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
	}
	// Replica A's round lands on backends 2 and 3 at 50 ms, on 0 and 1 at
	// 300 ms; B's on 0 and 1 at 50 ms, on 2 and 3 at 150 ms.
	hA := replicaThrough(t, servers, reattachLanding(key, &armed, map[int]time.Duration{0: 300 * time.Millisecond, 1: 300 * time.Millisecond, 2: 50 * time.Millisecond, 3: 50 * time.Millisecond}), mutate)
	hB := replicaThrough(t, servers, reattachLanding(key, &armed, map[int]time.Duration{0: 50 * time.Millisecond, 1: 50 * time.Millisecond, 2: 150 * time.Millisecond, 3: 150 * time.Millisecond}), mutate)
	viaA, viaB := hA.Client(), hB.Client()
	warmPair(t, viaA, viaB)
	ctx := t.Context()
	first := redis.NewClient(&redis.Options{Addr: hB.Addr, PoolSize: 1, MaxRetries: -1})
	defer first.Close()
	token, err := first.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	var conns []*redis.Client
	for _, addr := range []string{hA.Addr, hB.Addr} {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		defer c.Close()
		_ = c.Ping(ctx).Err()
		conns = append(conns, c)
	}
	armed.Store(true)
	got, errs := make([]int64, 2), make([]error, 2)
	done := make(chan struct{}, 2)
	for i, c := range conns {
		go func() {
			got[i], errs[i] = c.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
			done <- struct{}{}
		}()
	}
	<-done
	<-done
	armed.Store(false)
	told := 0
	for i := range conns {
		switch {
		case errs[i] == nil && got[i] == token:
			told++
		case errs[i] == nil || !isNoQuorum(errs[i]):
			t.Fatalf("re-attach through replica %c = %d, %v; want token %d (or NOQUORUM: ask again)", 'A'+i, got[i], errs[i], token)
		}
	}
	if told == 0 {
		t.Fatalf("neither re-attach answered the token (%v): the holder lost its lock to its own retry", errs)
	}
	_ = first.Close() // its booking moved with the lock
	thief := redis.NewClient(&redis.Options{Addr: hB.Addr, MaxRetries: -1})
	defer thief.Close()
	if tok := thiefGets(t, thief, key, 2*ttl*time.Millisecond); tok != 0 {
		t.Fatalf("another owner got token %d while %d connection(s) told they hold the lock were open (answers %v, %v; notes %q)",
			tok, told, got, errs, review38Notes(hA, key))
	}
}

// thiefGets tries another owner's LOCK.ACQUIRE of key through thief every
// 100 ms for d: the token of the first that was granted, 0 when every try
// was refused (nil, or NOQUORUM); any other error fails the test.
func thiefGets(t *testing.T, thief *redis.Client, key string, d time.Duration) int64 {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(t.Context(), "LOCK.ACQUIRE", key, "thief", 1000).Int64()
		if err == nil {
			return tok
		}
		if !errors.Is(err, redis.Nil) && !isNoQuorum(err) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
	return 0
}
