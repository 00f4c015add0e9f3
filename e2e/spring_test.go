package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// Spring Integration's RedisLockRegistry and ShedLock cannot be built here
// (Spring needs far more than Debian packages); the proxy knows their
// scripts by SHA1, each checked against the client's source text in the
// versions CLIENTS.md names, so these tests call them as those clients do,
// by EVALSHA, with their argument layout, and check the lock's behaviour on
// the real backends.

const (
	springObtain       = "175897a4e379e99e79a54937be09226f76cdcfe5" // 6.2+
	springObtainOld    = "6d2bc6d16248df19e144841297222544e3c7800a" // up to 6.1
	springUnlock       = "f0f9038aa2b6d6c3436c72d147573ea2a58f0ef2" // spin lock
	springUnlockNotify = "7a71e9443a2a41539fb115a5a27d5a748a871aed" // pub/sub lock
	springRenew        = "879e0f7b8d83c3266d4e996627438c05dbda0b89"
	shedLockUpdate     = "67256370c2d1c87e2250898075542b1a7fa5b917"
)

func TestSpringRedisLockRegistry(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, second := h.Serve()
	c, ctx := h.Client(), t.Context()
	waiterConn := replicaAt(t, second)
	const key, a, b = "registry:orders", "client-a", "client-b"
	evalsha := func(sha string, args ...any) (any, error) {
		return c.EvalSha(ctx, sha, []string{key}, args...).Result()
	}
	expect := func(what string, got any, err error, want any) {
		t.Helper()
		if err == redis.Nil {
			got, err = nil, nil
		}
		if err != nil || got != want {
			t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
		}
	}

	v, err := evalsha(springObtain, a, 60000)
	expect("A obtains", v, err, int64(1))
	v, err = evalsha(springObtain, b, 60000)
	expect("B's obtain is false (nil)", v, err, nil)
	v, err = evalsha(springObtainOld, b, 60000)
	expect("B's obtain, 6.1 script", v, err, nil)
	if h.Holders(key, a) != 5 {
		harness.Eventually(t, "A on every backend", func() bool { return h.Holders(key, a) == 5 })
	}
	v, err = evalsha(springObtain, a, 60000)
	expect("A re-obtains its own lock", v, err, int64(1))

	before := c.PTTL(ctx, key).Val()
	v, err = evalsha(springRenew, a, 120000)
	expect("A renews", v, err, int64(1))
	if after := c.PTTL(ctx, key).Val(); after <= before || after > 120*time.Second {
		t.Fatalf("PTTL %v -> %v after renewing to 120 s", before, after)
	}
	v, err = evalsha(springRenew, b, 120000)
	expect("B cannot renew", v, err, nil)

	// The pub/sub lock: a waiter listens (Spring PSUBSCRIBEs) through the
	// other replica; A's unlock through this one tells it, once.
	sub := waiterConn.PSubscribe(ctx, "registry-channel*")
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	v, err = evalsha(springUnlockNotify, b, "registry-channel")
	expect("B cannot unlock", v, err, nil)
	v, err = evalsha(springUnlockNotify, a, "registry-channel")
	expect("A unlocks", v, err, int64(1))
	m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
	if msg, ok := m.(*redis.Message); err != nil || !ok || msg.Channel != "registry-channel" || msg.Payload != key {
		t.Fatalf("the waiter got %#v, %v; want the lock key on registry-channel", m, err)
	}
	if m, err := sub.ReceiveTimeout(ctx, 300*time.Millisecond); err == nil {
		t.Fatalf("a second copy: %#v", m)
	}
	if harness.AnyKey(t, h.Backend, key) {
		harness.Eventually(t, "the lock gone from every backend", func() bool { return !harness.AnyKey(t, h.Backend, key) })
	}

	v, err = evalsha(springObtain, b, 60000)
	expect("B obtains the free lock", v, err, int64(1))
	v, err = evalsha(springUnlock, a, 60000)
	expect("A's spin unlock of B's lock", v, err, nil)
	v, err = evalsha(springUnlock, b)
	expect("B's spin unlock", v, err, int64(1))

	// Spring 7.1 first tries the native compare commands.
	expect("7.1 obtain", c.Do(ctx, "set", key, a, "nx", "px", 60000).Val(), nil, "OK")
	expect("7.1 renew", c.Do(ctx, "set", key, a, "ifeq", a, "px", 90000).Val(), nil, "OK")
	expect("7.1 unlock", c.Do(ctx, "delex", key, "ifeq", a).Val(), nil, int64(1))
}

// The layouts of older and DEL-variant releases, read from Spring's source
// (5.4-6.5): each obtains, refuses a stranger, releases its owner's lock and
// tells a waiter on the other replica.
func TestSpringScriptsOfEveryVersion(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, second := h.Serve()
	c, ctx := h.Client(), t.Context()
	waiterConn := replicaAt(t, second)
	sub := waiterConn.Subscribe(ctx, "registry-channel")
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	obtain := func(key, owner string) any {
		v, err := c.EvalSha(ctx, "8426c8df41c64d8177dce3ecbbe9146ef3759cd2", []string{key}, owner, 60000).Result() // 5.4.0-5.5.12
		if err != nil && err != redis.Nil {
			t.Fatalf("obtain %s: %v", key, err)
		}
		return v
	}
	for _, tc := range []struct {
		name, sha string
		keys      func(key string) []string
		args      func(owner string) []any
		notify    bool
		compares  bool // false: deletes whoever holds it (Spring read the owner with GET first)
	}{
		{"spin unlock with DEL", "356d97191f2b63031781ccc0e8e82f02e1995a90",
			func(k string) []string { return []string{k} }, func(o string) []any { return []any{o} }, false, true},
		{"pub/sub unlock with DEL", "b2dedc0ab01c17f9f20e3e6ddb62dcb6afbed0bd",
			func(k string) []string { return []string{k} }, func(o string) []any { return []any{o, "registry-channel"} }, true, true},
		{"6.4.8 pub/sub unlock, channel in KEYS[2]", "67aebbcba76d9674162e8906de1f669866f48e07",
			func(k string) []string { return []string{k, "registry-channel"} }, func(o string) []any { return []any{o} }, true, true},
		{"6.4.8 pub/sub unlock with DEL, channel in KEYS[2]", "4d7192f70618a620282e427698f9cde890151e58",
			func(k string) []string { return []string{k, "registry-channel"} }, func(o string) []any { return []any{o} }, true, true},
		{"5.5.7 pub/sub unlock (UNLINK, no compare)", "c1ae6c899d164de076f40ffe82eba8fb8e27af6c",
			func(k string) []string { return []string{k} }, func(string) []any { return []any{"registry-channel"} }, true, false},
		{"5.5.7 pub/sub unlock (DEL, no compare)", "20b5c3728736e2367b496c16390f9df56916a76f",
			func(k string) []string { return []string{k} }, func(string) []any { return []any{"registry-channel"} }, true, false},
	} {
		key := "registry:" + tc.sha[:8]
		if v := obtain(key, "client-a"); v != int64(1) {
			t.Fatalf("%s: obtain = %v", tc.name, v)
		}
		if v := obtain(key, "client-b"); v != nil {
			t.Fatalf("%s: a second obtain = %v, want nil", tc.name, v)
		}
		if tc.compares {
			if v, err := c.EvalSha(ctx, tc.sha, tc.keys(key), tc.args("client-b")...).Result(); err != redis.Nil {
				t.Fatalf("%s by a stranger = %v, %v; want nil", tc.name, v, err)
			}
		}
		if v, err := c.EvalSha(ctx, tc.sha, tc.keys(key), tc.args("client-a")...).Int64(); err != nil || v != 1 {
			t.Fatalf("%s = %v, %v; want 1", tc.name, v, err)
		}
		if harness.AnyKey(t, h.Backend, key) {
			harness.Eventually(t, tc.name+": the lock gone from every backend", func() bool { return !harness.AnyKey(t, h.Backend, key) })
		}
		if tc.notify {
			m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
			if msg, ok := m.(*redis.Message); err != nil || !ok || msg.Payload != key {
				t.Fatalf("%s: the waiter got %#v, %v; want %s", tc.name, m, err, key)
			}
		}
		if _, err := c.EvalSha(ctx, tc.sha, tc.keys(key), tc.args("client-a")...).Result(); err != redis.Nil {
			t.Fatalf("%s of a free lock = %v; want nil", tc.name, err)
		}
	}
}

func TestShedLock(t *testing.T) {
	h := harness.New(t, 3, nil)
	c, ctx := h.Client(), t.Context()
	const key = "job-lock:nightly"
	v1 := "ADDED:2026-11-21T03:00:00.000Z@host-a"
	if err := c.Do(ctx, "SET", key, v1, "NX", "PX", 10000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "SET", key, "ADDED:...@host-b", "NX", "PX", 10000).Err(); err != redis.Nil {
		t.Fatalf("a second host's SET NX = %v, want nil", err)
	}
	// extend (update): compare-and-PEXPIRE by SHA1.
	if n, err := c.EvalSha(ctx, shedLockUpdate, []string{key}, v1, 20000).Int64(); err != nil || n != 1 {
		t.Fatalf("update = %d, %v", n, err)
	}
	if ttl := c.PTTL(ctx, key).Val(); ttl <= 10*time.Second {
		t.Fatalf("PTTL %v after extending to 20 s", ttl)
	}
	// unlock before lockAtLeastFor: keep it only that long, with a new value.
	v2 := "ADDED:2026-11-21T03:00:05.000Z@host-a"
	if err := c.Do(ctx, "SET", key, v2, "XX", "PX", 300).Err(); err != nil {
		t.Fatalf("SET XX PX = %v", err)
	}
	if got := c.Get(ctx, key).Val(); got != v2 || h.Holders(key, v2) < 2 {
		t.Fatalf("after SET XX: %q on %d backends", got, h.Holders(key, v2))
	}
	if err := c.Do(ctx, "SET", "job-lock:absent", v2, "XX", "PX", 300).Err(); err != redis.Nil {
		t.Fatalf("SET XX of a missing lock = %v, want nil", err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := c.Do(ctx, "SET", key, "ADDED:...@host-b", "NX", "PX", 10000).Err(); err != nil {
		t.Fatalf("host b after lockAtLeastFor: %v", err)
	}
	// safeUpdate's release: the docs script (as Jedis users send it,
	// recorded) with a trailing newline, by text.
	safe := clientScript(t, shaDocsUnlock) + "\n"
	if sha := transcript.SHA1(safe); sha != "194f3902b2dd08557818d09fc2e7682d91480e53" {
		t.Fatalf("the docs unlock and a newline hash to %s, not ShedLock's safeUpdate release", sha)
	}
	if n, err := c.Eval(ctx, safe, []string{key}, "ADDED:...@host-b").Int64(); err != nil || n != 1 {
		t.Fatalf("safe release = %d, %v", n, err)
	}
	// Plain unlock: DEL (no owner check).
	_ = c.Do(ctx, "SET", key, v1, "NX", "PX", 10000).Err()
	if n, err := c.Del(ctx, key).Result(); err != nil || n != 1 || harness.AnyKey(t, h.Backend, key) && h.Holders(key, v1) >= 2 {
		t.Fatalf("DEL = %d, %v", n, err)
	}
}
