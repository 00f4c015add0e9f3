package e2e

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// review108: backends fsync every write (appendonly yes, appendfsync
// always). Backend 0's append-only files are copied (a backup, a volume
// snapshot); lock a is then written on backends 0 and 1 (2 held a stray
// key); backend 0 is brought back from the copy on its address. It has a
// new run_id, is persistent, carries its old run's marker and the
// replica's presence key as they were in the copy: the replica took it
// for a restart that lost nothing, and b was granted on 0 and 2. Fixed: the
// presence carries the sequence number of the replica's last check, and the
// copy's is older.
func TestReview108PersistentRestoredFromCopyVotes(t *testing.T) {
	restoredFromCopy(t, "r108:k", false)
}

// restoredFromCopy: backends that fsync every write; backend 0's
// append-only files copied, lock a written on backends 0 and 1 (2 held a
// stray key), backend 0 brought back from the copy on its address; b asked
// through the replica that watched it all, or (newReplica) through one
// started after the restore. b must be refused while a holds the lock.
func restoredFromCopy(t *testing.T, key string, newReplica bool) {
	t.Helper()
	h := bootstrapped(t, 3, shortWindow(2*time.Second))
	ctx := t.Context()
	for _, b := range h.Backend {
		for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
			if err := b.Client().ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	b0 := h.Backend[0].Client()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		p := b0.Info(ctx, "persistence").Val()
		if strings.Contains(p, "aof_rewrite_in_progress:0") && strings.Contains(p, "aof_rewrite_scheduled:0") && strings.Contains(p, "aof_enabled:1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("AOF rewrite did not finish")
		}
	}
	c := replicaAt(t, h.Addr)
	time.Sleep(3 * time.Second) // known longer than the window, persistent, presence written
	dir := b0.ConfigGet(ctx, "dir").Val()["dir"]
	backup := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(dir, "appendonlydir"), backup).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	// A restore comes back later than one health check after its copy was
	// taken: the replica's presence there has moved on since (a copy
	// restored within one health interval of being taken is not seen:
	// README).
	time.Sleep(400 * time.Millisecond)
	b2 := h.Backend[2].Client()
	if err := b2.Set(ctx, key, "stray", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.SetNX(ctx, key, "a", 2*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	at := time.Now()
	b2.Del(ctx, key)
	addr := h.Backend[0].Addr
	h.Backend[0].Kill()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--dir", backup, "--protected-mode", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer r.Close()
	for deadline := time.Now().Add(5 * time.Second); r.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("backend 0 did not come back")
		}
	}
	t.Logf("restored backend 0: lock %q, keys %v", r.Get(ctx, key).Val(), r.Keys(ctx, "__redlock:*").Val())
	asker := c
	if newReplica {
		_, addr2 := h.Serve() // replica 2, started after the restore
		asker = replicaAt(t, addr2)
	}
	time.Sleep(400 * time.Millisecond) // several health checks
	if newReplica {
		t.Logf("replica 1: %s", regexp.MustCompile("backend0:[^\n]*").FindString(c.Info(ctx, "redlock").Val()))
	}
	info := asker.Info(ctx, "redlock").Val()
	ok, err := asker.SetNX(ctx, key, "b", 2*time.Second).Result()
	t.Logf("b %s after a's grant (2s TTL): %v %v; %s", time.Since(at), ok, err, regexp.MustCompile("backend0:[^\n]*").FindString(info))
	if time.Since(at) > 1800*time.Millisecond {
		t.Skip("too slow to say anything")
	}
	if ok {
		t.Fatalf("b granted while a holds the lock on backend 1: two owners (new replica: %v)\n%s", newReplica, info)
	}
}
