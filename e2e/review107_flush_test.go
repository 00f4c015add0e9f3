package e2e

import (
	"context"
	"net"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// review107: every backend fsyncs every write (appendonly yes, appendfsync
// always). Backend 0, known to the replica longer than the window, is
// flushed (FLUSHALL, persisted) and restarted, still appendfsync always:
// it comes back empty, with a new run_id and no marker. The replica first
// meets the new run on a new connection (OnConnect / link identify: Watch,
// zero readStart), where observe does not judge markers and takes "fsyncs
// every write, so no quarantine", dropping the marker it knew; the next
// check finds nothing lost. Lock a, held on backends 0 and 1, is granted
// again to b on 0 and 2.
func TestReview107PersistentFlushedThenRestartedVotes(t *testing.T) {
	h := bootstrapped(t, 3, func(c *config.Config) { c.MaxTTL, c.HealthInterval = 2*time.Second, 100*time.Millisecond })
	ctx := t.Context()
	for _, b := range h.Backend {
		for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
			if err := b.Client().ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := replicaAt(t, h.Addr)
	time.Sleep(8 * time.Second) // known longer than the window, persistent
	t.Logf("before: %s", regexp.MustCompile("backend0:[^\n]*").FindString(c.Info(ctx, "redlock").Val()))
	b2 := h.Backend[2].Client()
	if err := b2.Set(ctx, "r107:k", "stray", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.SetNX(ctx, "r107:k", "a", 2*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	at := time.Now()
	b2.Del(ctx, "r107:k")
	if err := h.Backend[0].Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Restart backend 0 on its address, appendfsync always, from an empty dir.
	addr := h.Backend[0].Addr
	h.Backend[0].Kill()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--dir", t.TempDir(), "--protected-mode", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	b0 := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer b0.Close()
	for deadline := time.Now().Add(5 * time.Second); b0.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("backend 0 did not come back")
		}
	}
	time.Sleep(400 * time.Millisecond) // several health checks
	info := c.Info(ctx, "redlock").Val()
	ok, err := c.SetNX(ctx, "r107:k", "b", 2*time.Second).Result()
	t.Logf("b %s after a's grant (2s TTL): %v %v; %s", time.Since(at), ok, err, regexp.MustCompile("backend0:[^\n]*").FindString(info))
	if ok && time.Since(at) < 1800*time.Millisecond {
		t.Fatalf("b granted while a holds the lock on backend 1: two owners\n%s", info)
	}
}
