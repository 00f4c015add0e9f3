package e2e

// Lock-delay (Chubby, Consul): a lock that expired unreleased stays
// unavailable for the delay after its TTL; a released one is free at once.

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestLockDelay: a native lock whose holder is paused (SIGSTOP) past its
// TTL cannot be taken, from the other replica, until native_lock_delay
// after it expired; a plain SET NX PX lock likewise with lock_delay set,
// and at once with the default (off). A released lock is free at once.
func TestLockDelay(t *testing.T) {
	sleepBound(t)
	const delay = 3 * time.Second
	h := harness.New(t, 3, func(c *config.Config) { c.NativeLockDelay, c.LockDelay = delay, delay })
	_, addr2 := h.Serve()
	other := redis.NewClient(&redis.Options{Addr: addr2, MaxRetries: -1})
	defer other.Close()
	ctx := t.Context()

	// The holder: a real process that takes "storage" for 2s and is paused.
	spawned := time.Now()
	child := exec.Command(os.Args[0], h.Addr, "http://127.0.0.1:1")
	child.Env = append(os.Environ(), fencedClientEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := child.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Signal(syscall.SIGCONT); _ = child.Process.Kill(); _ = child.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "token ") {
		t.Fatalf("holder said %q, %v; want its token", line, err)
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const holderTTL = 2 * time.Second // fencedClient's
	waitGone(t, h, "storage")
	if err := other.Do(ctx, "LOCK.ACQUIRE", "storage", "client-2", 10000).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE of a lock that expired unreleased, within its delay = %v; want nil", err)
	}
	got := pollUntil(t, 2*delay, func() bool {
		return other.Do(ctx, "LOCK.ACQUIRE", "storage", "client-2", 10000).Err() == nil
	})
	if waited := got.Sub(spawned); waited < holderTTL+delay {
		t.Fatalf("the paused holder's lock was taken %v after it was taken; want no sooner than TTL+delay %v", waited, holderTTL+delay)
	}

	// Released: free at once, delay or not.
	if err := other.Do(ctx, "LOCK.RELEASE", "storage", "client-2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.Do(ctx, "LOCK.ACQUIRE", "storage", "client-3", 10000).Err(); err != nil {
		t.Fatalf("LOCK.ACQUIRE right after a release = %v; want a token", err)
	}

	// A plain SET NX PX lock with lock_delay set.
	one := h.Client()
	const plainTTL = time.Second
	before := time.Now()
	if ok, err := one.SetNX(ctx, "plain", "holder", plainTTL).Result(); err != nil || !ok {
		t.Fatalf("SET NX PX = %v, %v", ok, err)
	}
	waitGone(t, h, "plain")
	if ok, err := other.SetNX(ctx, "plain", "next", plainTTL).Result(); err != nil || ok {
		t.Fatalf("SET NX PX of a lock that expired unreleased, within lock_delay = %v, %v; want nil", ok, err)
	}
	got = pollUntil(t, 2*delay, func() bool { return other.SetNX(ctx, "plain", "next", plainTTL).Val() })
	if waited := got.Sub(before); waited < plainTTL+delay {
		t.Fatalf("the expired SET lock was taken %v after it was set; want no sooner than TTL+delay %v", waited, plainTTL+delay)
	}
}

// TestNoLockDelayByDefaultForSET: with the default settings an expired SET
// NX PX lock is free as soon as it expired, as on one Redis.
func TestNoLockDelayByDefaultForSET(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	ctx := t.Context()
	if ok := c.SetNX(ctx, "plain", "holder", 500*time.Millisecond).Val(); !ok {
		t.Fatal("SET NX PX failed")
	}
	waitGone(t, h, "plain")
	if ok, err := c.SetNX(ctx, "plain", "next", time.Second).Result(); err != nil || !ok {
		t.Fatalf("SET NX PX of an expired lock, lock_delay off = %v, %v; want OK", ok, err)
	}
}

// waitGone waits until key has expired on every backend.
func waitGone(t *testing.T, h *harness.Harness, key string) {
	t.Helper()
	harness.Eventually(t, key+" to expire on every backend", func() bool { return !harness.AnyKey(t, h.Backend, key) })
}

// pollUntil polls cond every 20ms for up to limit and returns when it held.
func pollUntil(t *testing.T, limit time.Duration, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}
