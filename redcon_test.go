package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestLockLifecycle(t *testing.T) {
	h := harness.New(t, 5, nil)
	c, ctx := h.Client(), t.Context()

	if ok, err := c.SetNX(ctx, "lock:a", "tok", 30*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	harness.Eventually(t, "the lock is not on all 5 backends", func() bool { return h.Holders("lock:a", "tok") == 5 })
	if ok, err := c.SetNX(ctx, "lock:a", "other", 30*time.Second).Result(); err != nil || ok {
		t.Fatalf("a second owner got %v, %v; want nil (taken)", ok, err)
	}
	if v, err := c.Get(ctx, "lock:a").Result(); v != "tok" || err != nil {
		t.Fatalf("GET = %q, %v", v, err)
	}
	pttl, err := c.PTTL(ctx, "lock:a").Result()
	if err != nil || pttl <= 29*time.Second || pttl > 30*time.Second {
		t.Fatalf("PTTL = %v, %v; want just under the 30s asked for", pttl, err)
	}
	if n, err := c.Exists(ctx, "lock:a", "lock:none").Result(); n != 1 || err != nil {
		t.Fatalf("EXISTS = %d, %v", n, err)
	}

	if v, err := c.Eval(ctx, harness.ExtendScript, []string{"lock:a"}, "tok", 60000).Int(); v != 1 || err != nil {
		t.Fatalf("extend = %d, %v", v, err)
	}
	if pttl, _ := c.PTTL(ctx, "lock:a").Result(); pttl <= 59*time.Second {
		t.Fatalf("PTTL after extending to 60s = %v", pttl)
	}
	if v, err := c.Eval(ctx, harness.ExtendScript, []string{"lock:a"}, "other", 60000).Int(); v != 0 || err != nil {
		t.Fatalf("extend by a non-owner = %d, %v", v, err)
	}

	if v, err := c.Eval(ctx, harness.UnlockScript, []string{"lock:a"}, "wrong").Int(); v != 0 || err != nil {
		t.Fatalf("unlock with a wrong value = %d, %v", v, err)
	}
	if n := h.Holders("lock:a", "tok"); n != 5 {
		t.Fatalf("a wrong-value unlock removed the lock from %d backends", 5-n)
	}
	if v, err := c.Eval(ctx, harness.UnlockScript, []string{"lock:a"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock = %d, %v", v, err)
	}
	if err := c.Get(ctx, "lock:a").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after unlock = %v", err)
	}
	if pttl, _ := c.PTTL(ctx, "lock:a").Result(); pttl != -2 {
		t.Fatalf("PTTL after unlock = %v, want -2", pttl)
	}

	// Expiry, then another owner. (A TTL of a second: a loaded machine
	// must not decide whether the first acquire gets its quorum in time.)
	if ok, err := c.SetNX(ctx, "lock:b", "first", time.Second).Result(); !ok {
		t.Fatalf("short lock not acquired: %v", err)
	}
	if ok, _ := c.SetNX(ctx, "lock:b", "second", time.Second).Result(); ok {
		t.Fatal("second owner won while the first held the lock")
	}
	time.Sleep(1100 * time.Millisecond)
	if ok, err := c.SetNX(ctx, "lock:b", "second", time.Second).Result(); !ok || err != nil {
		t.Fatalf("re-acquire after expiry = %v, %v", ok, err)
	}
	if v, _ := c.Get(ctx, "lock:b").Result(); v != "second" {
		t.Fatalf("GET after re-acquire = %q", v)
	}
}

func TestEvalSHAAndScriptLoad(t *testing.T) {
	h := harness.New(t, 3, nil)
	c, ctx := h.Client(), t.Context()
	sha, err := c.ScriptLoad(ctx, harness.ExtendScript).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ex, _ := c.ScriptExists(ctx, sha, "0000000000000000000000000000000000000000").Result(); !ex[0] || ex[1] {
		t.Fatalf("SCRIPT EXISTS = %v", ex)
	}
	c.SetNX(ctx, "k", "v", time.Second)
	if v, err := c.EvalSha(ctx, sha, []string{"k"}, "v", 5000).Int(); v != 1 || err != nil {
		t.Fatalf("EVALSHA extend = %d, %v", v, err)
	}
	// redis.io's unlock is known by SHA1 before anyone loads it.
	if v, err := c.EvalSha(ctx, "647c65a442733a1aa440f99908d249d13b4d6c4a", []string{"k"}, "v").Int(); v != 1 || err != nil {
		t.Fatalf("EVALSHA of the docs unlock = %d, %v", v, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.EvalSha(ctx, sha, []string{"k"}, "v", 5000).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after SCRIPT FLUSH = %v", err)
	}
}

func TestKilledBackends(t *testing.T) {
	h := harness.New(t, 5, nil)
	c, ctx := h.Client(), t.Context()
	for killed := 1; killed <= 2; killed++ {
		h.Backend[killed-1].Kill()
		key := fmt.Sprintf("lock:%d-down", killed)
		if ok, err := c.SetNX(ctx, key, "tok", 10*time.Second).Result(); !ok || err != nil {
			t.Fatalf("%d of 5 down: acquire = %v, %v", killed, ok, err)
		}
		if ok, err := c.SetNX(ctx, key, "other", 10*time.Second).Result(); ok || err != nil {
			t.Fatalf("%d of 5 down: contender = %v, %v; want nil", killed, ok, err)
		}
		if v, err := c.Eval(ctx, harness.UnlockScript, []string{key}, "tok").Int(); v != 1 || err != nil {
			t.Fatalf("%d of 5 down: unlock = %d, %v", killed, v, err)
		}
	}

	h.Backend[2].Kill()
	live := h.Backend[3:]
	err := c.SetNX(ctx, "lock:3-down", "tok", 10*time.Second).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM 2/5 acquired, need 3: ") {
		t.Fatalf("3 of 5 down: acquire = %v; want a NOQUORUM error", err)
	}
	for _, b := range h.Backend[:3] {
		// "down" once the health monitor saw it die, "connection refused" before.
		if !strings.Contains(err.Error(), b.Addr+": down") && !strings.Contains(err.Error(), b.Addr+": connection refused") {
			t.Errorf("the NOQUORUM reply does not name %s as down or refused: %v", b.Addr, err)
		}
	}
	if harness.AnyKey(t, live, "lock:3-down") {
		t.Fatal("a partial key was left on a live backend after NOQUORUM")
	}
	if err := c.Get(ctx, "lock:3-down").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("GET with 3 of 5 down = %v", err)
	}

	// Restarted (empty) backends count again.
	for _, b := range h.Backend[:3] {
		b.Restart()
	}
	if ok, err := c.SetNX(ctx, "lock:back", "tok", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("after restarts: acquire = %v, %v", ok, err)
	}
	// The restarted backends, and the flushed ones, have no scripts cached:
	// the engine's EVALSHA meets NOSCRIPT and must reload.
	for _, b := range live {
		b.Client().ScriptFlush(ctx)
	}
	if v, err := c.Eval(ctx, harness.UnlockScript, []string{"lock:back"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock on backends without cached scripts = %d, %v", v, err)
	}
	harness.Eventually(t, "the unlock left the key on a backend", func() bool { return !harness.AnyKey(t, h.Backend, "lock:back") })
}

func TestPausedBackend(t *testing.T) {
	const nodeTimeout = 500 * time.Millisecond
	h := harness.New(t, 5, func(c *config.Config) { c.NodeTimeout = nodeTimeout })
	c, ctx := h.Client(), t.Context()
	h.Backend[0].Pause()
	defer h.Backend[0].Resume()

	// Four live backends: the decision comes from them, without the paused one.
	start := time.Now()
	if ok, err := c.SetNX(ctx, "lock:p", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire with one paused = %v, %v", ok, err)
	}
	if el := time.Since(start); el >= nodeTimeout {
		t.Fatalf("acquire waited %v for the paused backend; the quorum was there without it", el)
	}

	// Two live backends hold another value: the round needs the paused
	// backend's vote, waits for it no longer than the node timeout, and fails.
	for _, b := range h.Backend[1:3] {
		b.Client().Set(ctx, "lock:q", "other", time.Minute)
	}
	start = time.Now()
	err := c.SetNX(ctx, "lock:q", "tok", 30*time.Second).Err()
	el := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), h.Backend[0].Addr+": timeout") {
		t.Fatalf("acquire needing the paused backend = %v; want NOQUORUM naming its timeout", err)
	}
	if el < nodeTimeout || el > nodeTimeout+3*time.Second {
		t.Fatalf("round took %v; want the node timeout %v plus the rollback", el, nodeTimeout)
	}
	if n := h.Holders("lock:q", "tok"); n != 0 {
		t.Fatalf("%d live backends kept the failed round's value", n)
	}
}

// TestNoOverlapUnderContention: 200 clients contend on 10 keys; every hold
// interval [acquire reply, min(release send, acquire send + TTL)] is recorded
// on one monotonic clock, and no two owners of one key may overlap.
func TestNoOverlapUnderContention(t *testing.T) {
	const (
		clients = 200
		keys    = 10
		ttl     = 2 * time.Second
		runFor  = 3 * time.Second
	)
	h := harness.New(t, 5, nil)
	c := h.Client(func(o *redis.Options) { o.PoolSize = clients; o.MinIdleConns = clients })
	ctx := t.Context()

	type hold struct {
		owner      string
		start, end time.Time
	}
	var (
		mu      sync.Mutex
		holds   = map[string][]hold{}
		errs    []error
		sick    int // NOQUORUM answers: honest under overload, never unsafe
		wg      sync.WaitGroup
		stopAt  = time.Now().Add(runFor)
		retries int
	)
	for i := range clients {
		wg.Go(func() {
			for n := 0; time.Now().Before(stopAt); n++ {
				key := fmt.Sprintf("lock:%d", (i+n)%keys)
				owner := fmt.Sprintf("c%d-%d", i, n)
				sent := time.Now()
				ok, err := c.SetNX(ctx, key, owner, ttl).Result()
				if err != nil && strings.HasPrefix(err.Error(), "NOQUORUM") {
					mu.Lock()
					sick++
					mu.Unlock()
					continue
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if !ok {
					mu.Lock()
					retries++
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				got := time.Now()
				time.Sleep(time.Duration(n%5) * time.Millisecond)
				released := time.Now()
				if err := c.Eval(ctx, harness.UnlockScript, []string{key}, owner).Err(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mu.Lock()
				holds[key] = append(holds[key], hold{owner, got, minTime(released, sent.Add(ttl))})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d errors under contention, first: %v", len(errs), errs[0])
	}
	total := 0
	for key, hs := range holds {
		total += len(hs)
		sortHolds(hs, func(a, b hold) bool { return a.start.Before(b.start) })
		for i := 1; i < len(hs); i++ {
			if hs[i].start.Before(hs[i-1].end) {
				t.Errorf("%s: %s held from %v while %s held until %v", key, hs[i].owner, hs[i].start, hs[i-1].owner, hs[i-1].end)
			}
		}
	}
	if total < 50 {
		t.Fatalf("only %d acquisitions in %v: the test proves nothing", total, runFor)
	}
	t.Logf("%d acquisitions, %d taken answers, %d NOQUORUM answers, over %d keys, no overlap", total, retries, sick, len(holds))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func sortHolds[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestPipelineInOrder(t *testing.T) {
	h := harness.New(t, 3, nil)
	c, ctx := h.Client(), t.Context()
	pipe := c.Pipeline()
	const n = 40
	sets := make([]*redis.BoolCmd, n)
	echoes := make([]*redis.StringCmd, n)
	gets := make([]*redis.StringCmd, n)
	for i := range n {
		key := fmt.Sprintf("pl:%d", i%7) // repeats: later SETs of a key find it taken
		sets[i] = pipe.SetNX(ctx, key, fmt.Sprint(i), 10*time.Second)
		echoes[i] = pipe.Echo(ctx, fmt.Sprint("e", i))
		gets[i] = pipe.Get(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		wantSet := i < 7
		wantGet := fmt.Sprint(i % 7)
		if sets[i].Val() != wantSet || echoes[i].Val() != fmt.Sprint("e", i) || gets[i].Val() != wantGet {
			t.Fatalf("reply %d out of order: set=%v echo=%q get=%q", i, sets[i].Val(), echoes[i].Val(), gets[i].Val())
		}
	}
}
