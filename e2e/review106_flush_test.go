package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// review106: with appendfsync always on every backend, a replica started
// after backend 0 was flushed sees it for the first time with no marker
// while the others carry theirs; as it fsyncs every write it counts at once
// (quarantine's "persistent" case comes before "lacks the marker the other
// backends carry"). Lock a, held on backends 0 and 1 through replica A, is
// granted again to b through replica B on 0 and 2.
func TestReview106NewReplicaCountsFlushedPersistentBackend(t *testing.T) {
	h := bootstrapped(t, 3, func(c *config.Config) { c.MaxTTL, c.HealthInterval = 5*time.Second, 100*time.Millisecond })
	ctx := t.Context()
	for _, b := range h.Backend {
		for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
			if err := b.Client().ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := replicaAt(t, h.Addr)
	time.Sleep(time.Second)
	t.Logf("A: %s", regexp.MustCompile("backend0:[^\n]*").FindString(a.Info(ctx, "redlock").Val()))
	b2 := h.Backend[2].Client()
	if err := b2.Set(ctx, "r106:k", "stray", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.SetNX(ctx, "r106:k", "a", 4*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	at := time.Now()
	b2.Del(ctx, "r106:k")
	if err := h.Backend[0].Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, addr := h.Serve()
	b := replicaAt(t, addr)
	ok, err := b.SetNX(ctx, "r106:k", "b", 4*time.Second).Result()
	info := b.Info(ctx, "redlock").Val()
	t.Logf("b through replica B, %s after a's grant (4s TTL): %v %v; B's %s", time.Since(at), ok, err, regexp.MustCompile("backend0:[^\n]*").FindString(info))
	if ok && time.Since(at) < 3*time.Second {
		t.Fatalf("b granted while a holds the lock on backend 1: two owners\n%s", info)
	}
}
