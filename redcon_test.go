package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestLockLifecycle(t *testing.T) {
	h := harness.New(t, 5, nil)
	c, ctx := h.Client(), t.Context()

	sent := time.Now()
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
	// The 30s asked for, less the time since it was asked (not the padded
	// TTL); the slack covers the whole milliseconds TTLs are kept in.
	const slack = 10 * time.Millisecond
	least := 30*time.Second - time.Since(sent) - slack
	pttl, err := c.PTTL(ctx, "lock:a").Result()
	if err != nil || pttl <= least || pttl > 30*time.Second {
		t.Fatalf("PTTL = %v, %v; want the 30s asked for less the time since: in (%v, 30s]", pttl, err, least)
	}
	if n, err := c.Exists(ctx, "lock:a", "lock:none").Result(); n != 1 || err != nil {
		t.Fatalf("EXISTS = %d, %v", n, err)
	}

	sent = time.Now()
	if v, err := c.Eval(ctx, harness.ExtendScript, []string{"lock:a"}, "tok", 60000).Int(); v != 1 || err != nil {
		t.Fatalf("extend = %d, %v", v, err)
	}
	least = 60*time.Second - time.Since(sent) - slack
	if pttl, _ := c.PTTL(ctx, "lock:a").Result(); pttl <= least || pttl > 60*time.Second {
		t.Fatalf("PTTL after extending to 60s = %v; want in (%v, 60s]", pttl, least)
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

	// Expiry, then another owner: a second owner tries until it wins, which
	// it must not before the first's TTL, counted from the first's request,
	// has run out. (How many of its tries fall within the TTL is the
	// machine's to decide; lock:a above proves a held lock refuses.)
	const short = 2 * time.Second
	sent = time.Now()
	if ok, err := c.SetNX(ctx, "lock:b", "first", short).Result(); !ok {
		t.Fatalf("short lock not acquired: %v", err)
	}
	refused := 0
	harness.Eventually(t, "lock:b never became free after its TTL", func() bool {
		ok, err := c.SetNX(ctx, "lock:b", "second", short).Result()
		if err != nil {
			t.Fatalf("a second owner's acquire = %v", err)
		}
		if ok && time.Since(sent) < short {
			t.Fatalf("second owner won %v after the first asked for %v", time.Since(sent), short)
		}
		if !ok {
			refused++
		}
		return ok
	})
	if v, _ := c.Get(ctx, "lock:b").Result(); v != "second" {
		t.Fatalf("GET after re-acquire = %q", v)
	}
	t.Logf("the second owner was refused %d times before the first's TTL ran out", refused)
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
	// Once the health monitor has seen them back (it re-checks a down backend
	// with a backoff), they vote again.
	harness.Eventually(t, "an acquire granted by the restarted backends", func() bool {
		ok, err := c.SetNX(ctx, "lock:back", "tok", 10*time.Second).Result()
		return ok && err == nil
	})
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
// on one monotonic clock, and no two owners of one key may overlap. It runs
// for 3s, and on until 50 holds are in (a loaded machine grants fewer), for
// at most a minute.
func TestNoOverlapUnderContention(t *testing.T) {
	const (
		clients   = 200
		keys      = 10
		ttl       = 2 * time.Second
		runFor    = 3 * time.Second
		enough    = 50
		runAtMost = time.Minute
	)
	h := harness.New(t, 5, nil)
	c := h.Client(func(o *redis.Options) { o.PoolSize = clients; o.MinIdleConns = clients })
	ctx := t.Context()

	type hold struct {
		owner      string
		start, end time.Time
	}
	var (
		mu    sync.Mutex
		holds = map[string][]hold{}
		errs  []error
		// NOQUORUM answers to acquires and to releases: honest under
		// overload (a backend's answer came too late), never unsafe.
		sick, sickReleases int
		wg                 sync.WaitGroup
		start              = time.Now()
		held               atomic.Int64
		retries            int
	)
	running := func() bool {
		el := time.Since(start)
		return el < runFor || held.Load() < enough && el < runAtMost
	}
	for i := range clients {
		wg.Go(func() {
			for n := 0; running(); n++ {
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
				// The owner stops using the lock here, whatever the release
				// answers: a release that found no quorum leaves the lock to
				// expire with its TTL, which only keeps others out longer.
				err = c.Eval(ctx, harness.UnlockScript, []string{key}, owner).Err()
				noQuorum := err != nil && strings.HasPrefix(err.Error(), "NOQUORUM")
				mu.Lock()
				holds[key] = append(holds[key], hold{owner, got, minTime(released, sent.Add(ttl))})
				if noQuorum {
					sickReleases++
				} else if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				held.Add(1)
				if err != nil && !noQuorum {
					return
				}
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
	if total < enough {
		t.Fatalf("only %d acquisitions in %v: the test proves nothing", total, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("%d acquisitions, %d taken answers, %d NOQUORUM answers to acquires and %d to releases, over %d keys, no overlap",
		total, retries, sick, sickReleases, len(holds))
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
