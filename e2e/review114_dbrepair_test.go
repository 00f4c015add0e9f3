package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestReview114RepairWritesADatabaseKey: 90d21e0 says repairs copy only
// counters in the proxy's names (mergedCounters keeps names starting
// "__redlock:"), but a key of database n > 0 is "__redlock:db<n>:" + the
// client's key (NamespaceKey): a client's own key. A replica before
// LockCounterKey listed an RFencedLock counter of database 3 under that
// name; after the upgrade the key is the client's (here, a plain SET NX
// lock with a numeric value), and a repair of a flushed backend writes
// it there, with no TTL: a copy of the client's lock that never expires.
func TestReview114RepairWritesADatabaseKey(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	c3 := h.Client(func(o *redis.Options) { o.DB = 3 })
	if err := h.Client().Do(ctx, "LOCK.ACQUIRE", "warm", "o", 1000).Err(); err != nil {
		t.Fatal(err)
	}
	const key = "redisson_lock_token:{r}"
	backendKey := quorum.NamespaceKey(3, key)
	for _, b := range h.Backend { // what a replica before 90d21e0 left: the name listed
		if err := b.Client().SAdd(ctx, quorum.CountersKey, backendKey).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The client of database 3 takes a plain lock of that name.
	if ok, err := c3.SetNX(ctx, key, "12345", 2*time.Second).Result(); !ok || err != nil {
		t.Fatalf("SET %s 12345 NX PX 2000 in db 3 = %v, %v", key, ok, err)
	}
	flushed := h.Backend[2].Client()
	if err := flushed.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the flushed backend repaired", func() bool {
		return flushed.Exists(ctx, quorum.IntactKey).Val() == 1
	})
	v, _ := flushed.Get(ctx, backendKey).Result()
	ttl := flushed.PTTL(ctx, backendKey).Val()
	t.Logf("flushed backend after repair: %s = %q, PTTL %v", backendKey, v, ttl)
	if v != "" {
		t.Errorf("a repair wrote the db-3 client's key %s = %q (PTTL %v) on the flushed backend", backendKey, v, ttl)
	}
	time.Sleep(2500 * time.Millisecond)
	if ok, err := c3.SetNX(ctx, key, "other", 2*time.Second).Result(); err != nil || !ok {
		t.Logf("after the lock's TTL: SET NX = %v, %v", ok, err)
	}
	t.Logf("after the lock's TTL: the flushed backend still has %s = %q", backendKey, flushed.Get(ctx, backendKey).Val())
}
