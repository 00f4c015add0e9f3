package e2e

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// Redisson's scripts of every version 3.10-3.52 are known by SHA1 (checked
// against Redisson's source; 3.23.4's and 3.52.0's also seen on the wire from
// the real clients, whose sessions TestTranscripts replays), so these tests
// send what Redisson sends, and compare the proxy with one plain
// redis-server running the very same scripts: each reply through the proxy
// must be the one a single Redis gives. A text no recording carries (the
// versions before 3.22, which cannot be built here) goes to the proxy by
// EVALSHA, and one Redis runs a recorded script of the same effect in its
// place (twin), or its reply is the one Redis gave that text (fixed).

// redissonCall is one command of a Redisson session.
type redissonCall struct {
	what    string
	args    []any
	ttl     bool   // the reply is a PTTL: compare it as "a positive TTL up to the lease"
	counter string // the reply carries a fencing token of this counter: compare it as counted from the counter's start (tokenFrom)
	bySHA   bool   // sent by EVALSHA: one Redis lacks the text
	twin    []any  // what one Redis runs in its place
	fixed   bool   // or the reply one Redis gave the text: want, wantErr
	want    any
	wantErr string
}

// twin has one Redis run o's call in place of c's.
func twin(c, o redissonCall) redissonCall { c.twin = o.args; return c }

// fixed gives c the reply one Redis (redis-server 7.0.15) gave its text.
func fixed(c redissonCall, want any, wantErr string) redissonCall {
	c.fixed, c.want, c.wantErr = true, want, wantErr
	return c
}

func evalCall(what, script string, keys []string, argv ...any) redissonCall {
	args := []any{"eval", script, len(keys)}
	for _, k := range keys {
		args = append(args, k)
	}
	return redissonCall{what: what, args: append(args, argv...)}
}

func TestRedissonLikeSingleRedis(t *testing.T) {
	h := harness.New(t, 3, nil)
	proxied := h.Client()
	direct := redistest.Start(t, 1)[0].Client()

	var (
		lock      = evalScript(t, shaRLock, 1)
		lock312   = evalScript(t, shaRLock312, 1)
		lock310   = evalScript(t, shaRLock310, 1)
		unlock    = evalScript(t, shaRUnlock, 3)
		unlock3   = evalScript(t, shaRUnlock3106, 2)
		unlock322 = evalScript(t, shaRUnlock322, 2)
		tryFenced = evalScript(t, shaRFencedTry, 2)
		unlock310 = evalScript(t, shaRUnlock310, 2)
		renew     = evalScript(t, shaRRenew, 1)
		batch     = evalScript(t, shaRBatch, 2)
		force     = evalScript(t, shaRForce, 2)
		forceOld  = evalScript(t, shaRForceOld, 2)
		fenced    = evalScript(t, shaRFencedLock, 2)
	)
	const (
		name  = "{orders}"
		other = "{invoices}"
		ch    = "redisson_lock__channel:{orders}"
		a     = "6f0c-uuid-a:1" // Redisson's owner: <client uuid>:<thread id>
		b     = "7d1e-uuid-b:7"
		lease = 30000
	)
	latch := func(n int) string { return fmt.Sprintf("redisson_unlock_latch:{orders}:%d", n) }
	session := []redissonCall{
		lock("A locks", name, lease, a),
		ttlCall(lock("B is refused with A's PTTL", name, lease, b)),
		lock312("A re-enters (3.12 text)", name, lease, a),
		twin(lock310("A re-enters (3.10 text)", name, lease, a), lock("", name, lease, a)),
		{what: "hold count", args: []any{"hget", name, a}},
		{what: "A holds it", args: []any{"hexists", name, a}},
		{what: "B does not", args: []any{"hexists", name, b}},
		{what: "isLocked", args: []any{"exists", name}},
		{what: "remainTimeToLive", args: []any{"pttl", name}, ttl: true},
		renew("A renews", name, lease, a),
		renew("B cannot renew", name, lease, b),
		batch("batched renewal", name, other, lease, a, a),
		unlock("B cannot unlock: nil", name, ch, latch(1), 0, lease, b, "publish", 10000),
		unlock("A gives up one hold: 0", name, ch, latch(2), 0, lease, a, "publish", 10000),
		unlock("a retried unlock answers from the latch", name, ch, latch(2), 0, lease, a, "publish", 10000),
		{what: "hold count after the retry", args: []any{"hget", name, a}},
		twin(unlock3("A gives up another (3.10.6 text)", name, ch, 0, lease, a), unlock322("", name, ch, 0, lease, a, "PUBLISH")),
		lock("A re-enters", name, lease, a),
		unlock322("A gives up one (3.22 text, no latch): 0", name, ch, 0, lease, a, "PUBLISH"),
		unlock322("B cannot (3.22 text): nil", name, ch, 0, lease, b, "PUBLISH"),
		unlock("A releases: 1", name, ch, latch(3), 0, lease, a, "publish", 10000),
		{what: "free", args: []any{"exists", name}},
		unlock("A again: nil", name, ch, latch(4), 0, lease, a, "publish", 10000),
		fixed(unlock310("3.10.0 text on a free lock: 1", name, ch, 0, lease, a), int64(1), ""),
		lock("B locks", name, lease, b),
		force("forceUnlock", name, ch, 0, "publish"),
		twin(forceOld("forceUnlock of a free lock", name, ch, 0), force("", name, ch, 0, "publish")),
		fenced("fenced lock()", "{orders}f", "redisson_lock_token:{orders}f", lease, a),
		tokenCall(redissonCall{what: "its token", args: []any{"get", "redisson_lock_token:{orders}f"}}, "f"),
		ttlCall(fenced("fenced lock() by another", "{orders}f", "redisson_lock_token:{orders}f", lease, b)),
		fenced("fenced re-entry", "{orders}f", "redisson_lock_token:{orders}f", lease, a),
		tokenCall(redissonCall{what: "token after re-entry", args: []any{"get", "redisson_lock_token:{orders}f"}}, "f"),
		{what: "GET of a hash lock", args: []any{"get", name + "f"}},
		tokenCall(tryFenced("fenced tryLock: {-1, token}", "{orders}t", "redisson_lock_token:{orders}t", lease, a), "t"),
		ttlCall(tryFenced("fenced tryLock by another: {pttl, -1}", "{orders}t", "redisson_lock_token:{orders}t", lease, b)),
		tokenCall(tryFenced("fenced tryLock re-entry", "{orders}t", "redisson_lock_token:{orders}t", lease, a), "t"),
		unlock322("fenced unlock (3.22 text)", "{orders}t", "redisson_lock__channel:{orders}t", 0, lease, a, "PUBLISH"),
		unlock322("fenced release (3.22 text): 1", "{orders}t", "redisson_lock__channel:{orders}t", 0, lease, a, "PUBLISH"),
		tokenCall(tryFenced("fenced tryLock by another after release", "{orders}t", "redisson_lock_token:{orders}t", lease, b), "t"),
	}
	ctx := t.Context()
	directStarts, proxiedStarts := map[string]int64{}, map[string]int64{}
	for _, call := range session {
		var want any
		var wantErr error
		switch {
		case call.fixed:
			want = call.want
			if call.wantErr != "" {
				wantErr = errors.New(call.wantErr)
			}
		case call.twin != nil:
			want, wantErr = direct.Do(ctx, call.twin...).Result()
		case call.bySHA:
			t.Fatalf("%s: one Redis lacks its text: give it a twin or the reply it gave", call.what)
		default:
			want, wantErr = direct.Do(ctx, call.args...).Result()
		}
		got, gotErr := proxied.Do(ctx, call.args...).Result()
		if call.ttl {
			want, got = asLease(want, lease), asLease(got, lease)
		}
		if call.counter != "" {
			want, got = tokenFrom(want, call.counter, directStarts), tokenFrom(got, call.counter, proxiedStarts)
		}
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) && !(wantErr != nil && gotErr != nil && strings.HasPrefix(gotErr.Error(), strings.Fields(wantErr.Error())[0])) {
			t.Fatalf("%s: error %v through the proxy, %v from one Redis", call.what, gotErr, wantErr)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: %#v through the proxy, %#v from one Redis", call.what, got, want)
		}
		t.Logf("%-45s %v %v", call.what, got, gotErr)
	}
	// The backends keep Redisson's layout: a hash of owner -> holds.
	if _, err := proxied.Do(ctx, "eval", clientScript(t, shaRLock), 1, "{layout}", lease, a).Result(); err != redis.Nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "every backend holds the hash", func() bool {
		for _, be := range h.Backend {
			if v, _ := be.Client().HGet(ctx, "{layout}", a).Result(); v != "1" {
				return false
			}
		}
		return true
	})
}

// evalScript calls a Redisson script with nkeys KEYS: by its recorded
// text, or by EVALSHA where no recording carries it.
func evalScript(t *testing.T, sha string, nkeys int) func(what string, args ...any) redissonCall {
	texts, err := recordedTexts()
	if err != nil {
		t.Fatal(err)
	}
	text, recorded := texts[sha]
	return func(what string, args ...any) redissonCall {
		k := make([]string, nkeys)
		for i := range k {
			k[i] = args[i].(string)
		}
		if recorded {
			return evalCall(what, text, k, args[nkeys:]...)
		}
		c := evalCall(what, sha, k, args[nkeys:]...)
		c.args[0], c.bySHA = "evalsha", true
		return c
	}
}

func ttlCall(c redissonCall) redissonCall { c.ttl = true; return c }

// tokenCall marks c's reply as carrying a fencing token of counter.
func tokenCall(c redissonCall, counter string) redissonCall { c.counter = counter; return c }

// tokenFrom reads a reply carrying a fencing token (a GET's digits, an
// integer, the fenced tryLock's {-1, token}) as its distance from where
// counter started on one side (starts: the first token seen, less one).
// One Redis counts a lock's tokens from 1; the proxy from its shared
// counter (quorum.LockCounterKey): the same steps, from another start.
func tokenFrom(v any, counter string, starts map[string]int64) any {
	var n int64
	switch x := v.(type) {
	case string:
		var err error
		if n, err = strconv.ParseInt(x, 10, 64); err != nil {
			return v
		}
	case int64:
		n = x
	case []any:
		if len(x) == 2 && x[1] != int64(-1) {
			return []any{x[0], tokenFrom(x[1], counter, starts)}
		}
		return v
	default:
		return v
	}
	if _, ok := starts[counter]; !ok {
		starts[counter] = n - 1
	}
	return fmt.Sprint("token ", n-starts[counter], " of ", counter)
}

// asLease reads a PTTL reply as "within the lease" or keeps it as it is.
func asLease(v any, lease int64) any {
	if n, ok := v.(int64); ok && n > 0 && n <= lease {
		return "a TTL within the lease"
	}
	if pair, ok := v.([]any); ok && len(pair) == 2 { // the fenced tryLock's {pttl, -1}
		return []any{asLease(pair[0], lease), pair[1]}
	}
	return v
}

// TestRedissonWaiterWakesAcrossReplicas: Redisson's waiting protocol. B's
// tryLock fails with A's PTTL; B subscribes to the lock's channel through
// another proxy replica and waits; A unlocks through the first replica; the
// "0" reaches B once (5 backends carry it), long before A's lease would
// have run out, and B's retry takes the lock.
func TestRedissonWaiterWakesAcrossReplicas(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, addr2 := h.Serve()
	replicaA := h.Client()
	replicaB := redis.NewClient(&redis.Options{Addr: addr2, MaxRetries: -1})
	t.Cleanup(func() { _ = replicaB.Close() })
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, lease = "{jobs}", "redisson_lock__channel:{jobs}", 20000

	if err := replicaA.Eval(ctx, lock, []string{name}, lease, "a:1").Err(); err != redis.Nil {
		t.Fatalf("A's lock: %v", err)
	}
	pttl, err := replicaB.Eval(ctx, lock, []string{name}, lease, "b:1").Int64()
	if err != nil || pttl <= 0 || pttl > lease {
		t.Fatalf("B's tryLock = %d, %v; want A's PTTL", pttl, err)
	}
	sub := replicaB.Subscribe(ctx, ch)
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil { // the subscribe confirmation
		t.Fatal(err)
	}
	if err := sub.Ping(ctx); err != nil { // Redisson pings its pub/sub connections
		t.Fatal(err)
	}
	if m, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil || !strings.Contains(fmt.Sprint(m), "Pong") {
		t.Fatalf("PING while subscribed: %v, %v", m, err)
	}
	start := time.Now()
	released, err := replicaA.Eval(ctx, unlock, []string{name, ch, "redisson_unlock_latch:{jobs}:1"}, 0, lease, "a:1", "publish", 10000).Int64()
	if err != nil || released != 1 {
		t.Fatalf("A's unlock = %d, %v", released, err)
	}
	m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("B was not woken: %v", err)
	}
	if msg, ok := m.(*redis.Message); !ok || msg.Channel != ch || msg.Payload != "0" {
		t.Fatalf("B got %#v; want message \"0\" on %s", m, ch)
	}
	woke := time.Since(start)
	if err := replicaB.Eval(ctx, lock, []string{name}, lease, "b:1").Err(); err != redis.Nil {
		t.Fatalf("B's retry after the wake-up: %v", err)
	}
	// Each of the 5 backends carried the message; B hears it once.
	if m, err := sub.ReceiveTimeout(ctx, 300*time.Millisecond); err == nil {
		t.Fatalf("a second copy reached B: %#v", m)
	}
	t.Logf("B woke %v after A's unlock (A's lease had %d ms left)", woke.Round(time.Millisecond), pttl)
}

// TestRedissonContention: workers on two replicas run Redisson's protocol
// (tryLock; on a PTTL, wait on the channel for "0" or the PTTL; unlock, which
// publishes) on one lock. The lock is exclusive: no two holds overlap; and
// the waiters are woken by releases, not by leases running out.
func TestRedissonContention(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, second := h.Serve()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const name, ch, lease, workers, rounds = "{contended}", "redisson_lock__channel:{contended}", 10000, 6, 4
	var (
		mu      sync.Mutex
		holding string
		holds   int
	)
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		addr := h.Addr
		if w%2 == 1 {
			addr = second
		}
		go func() {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			sub := c.Subscribe(t.Context(), ch) // Redisson subscribes before it waits
			defer sub.Close()
			if _, err := sub.ReceiveTimeout(t.Context(), 5*time.Second); err != nil {
				errs <- err
				return
			}
			owner := fmt.Sprintf("uuid-%d:1", w)
			for i := range rounds {
				for {
					pttl, err := c.Eval(t.Context(), lock, []string{name}, lease, owner).Int64()
					if err == redis.Nil {
						break
					}
					if err != nil {
						errs <- err
						return
					}
					_, _ = sub.ReceiveTimeout(t.Context(), time.Duration(pttl)*time.Millisecond)
				}
				mu.Lock()
				if holding != "" {
					mu.Unlock()
					errs <- fmt.Errorf("%s got the lock while %s held it", owner, holding)
					return
				}
				holding, holds = owner, holds+1
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				holding = ""
				mu.Unlock()
				latch := fmt.Sprintf("redisson_unlock_latch:{contended}:%d-%d", w, i)
				if n, err := c.Eval(t.Context(), unlock, []string{name, ch, latch}, 0, lease, owner, "publish", 10000).Int64(); err != nil || n != 1 {
					errs <- fmt.Errorf("%s's unlock = %d, %v", owner, n, err)
					return
				}
				c.Del(t.Context(), latch)
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	// Had any waiter slept out a lease instead of being woken, this would take 10 s or more.
	if holds != workers*rounds || took > 8*time.Second {
		t.Fatalf("%d holds in %v", holds, took)
	}
	t.Logf("%d workers on 2 replicas: %d exclusive holds in %v", workers, holds, took.Round(time.Millisecond))
}
