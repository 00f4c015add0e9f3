package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestNotHeldReleaseEndsLockDelay (helper-61; nemesis seed 3901; failed
// 4 of 4 on 2890e1d and on 77098b4, before releases kept a lock-delay's
// note marked until a quorum deleted the lock: delifeq.lua, unmark.lua):
// a native lock (lock-delay 3s) is granted through replica 1 on exactly Q=3 of 5
// backends (0, 1, 2: backends 3 and 4 refuse it, as a stale fair-queue head or
// a straggler's key would). Its holder's LOCK.EXTEND through replica 1 reaches
// backends 0 and 1 but is held on the link to backend 2 (the nemesis's stall):
// 2 yes, 2 no, one pending: NOQUORUM at its node wait (in the run, no answer
// before replica 0 was killed), an outcome unknown to the holder. The lock's window
// ends (the key expires on backend 2; its note keeps the lock-delay there).
// The holder's LOCK.RELEASE through replica 2 answers 0 (not held: 3 of 5
// absent), yet delifeq.lua deleted the lock and its note on backends 0 and 1.
// Another owner's SET NX PX through replica 2 then won 0, 1, 3, 4: granted
// inside the lock-delay of a lock that expired unreleased (as far as any
// answer told), which the history checker (rules.go lockDelays) flags.
// Now the release keeps the notes on 0 and 1, marked, and never unmarks
// them, as it did not succeed: SET NX finds only 3 and 4 free.
func TestNotHeldReleaseEndsLockDelay(t *testing.T) {
	const (
		key   = "ld:k"
		owner = "native-a"
		ttl   = 1500 * time.Millisecond
		delay = 3 * time.Second
	)
	var (
		refuse      atomic.Bool // backends 3 and 4 refuse the fenced acquire of key
		refused     atomic.Int32
		holdExtend  atomic.Bool // the link to backend 2 holds owner's 3-key script (the extend)
		unblock     = make(chan struct{})
		unblockOnce sync.Once
	)
	hook := func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if !ok || len(keys) == 0 || keys[0] != key {
			return nil
		}
		switch {
		case refuse.Load() && (i == 3 || i == 4) && len(keys) == 7: // a fair (fenced) acquire
			refused.Add(1)
			return []string{"EVAL", "return 0", "0"}
		case holdExtend.Load() && i == 2 && len(keys) == 3 && len(argv) > 0 && argv[0] == owner:
			<-unblock
			return []string{"PING"}
		}
		return nil
	}

	servers, h1, h2 := hookedPair(t, 5, hook, func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay = time.Second, delay
	})
	t.Cleanup(func() { unblockOnce.Do(func() { close(unblock) }) }) // runs before the replicas close
	r1 := h1.Client(func(o *redis.Options) { o.PoolSize = 2 })
	r2 := h2.Client(func(o *redis.Options) { o.PoolSize = 2 })
	ctx := t.Context()
	harness.Eventually(t, "replicas ready", func() bool {
		_, e1 := r1.Do(ctx, "LOCK.ACQUIRE", "ld:warm1", "w", 5000).Int64()
		_, e2 := r2.Do(ctx, "LOCK.ACQUIRE", "ld:warm2", "w", 5000).Int64()
		return e1 == nil && e2 == nil
	})

	state := func(when string) {
		var b strings.Builder
		for i, s := range servers {
			c := s.Client()
			v, _ := c.Get(ctx, key).Result()
			kp := c.PTTL(ctx, key).Val()
			n, _ := c.Get(ctx, quorum.MetaKey(key)).Result()
			np := c.PTTL(ctx, quorum.MetaKey(key)).Val()
			fmt.Fprintf(&b, "\n  backend %d: key %q pttl %v, note %q pttl %v", i, v, kp, n, np)
		}
		t.Logf("%s:%s", when, b.String())
	}

	// 1. The native lock, on backends 0, 1, 2 only.
	refuse.Store(true)
	invoked := time.Now()
	tok, err := r1.Do(ctx, "LOCK.ACQUIRE", key, owner, ttl.Milliseconds()).Int64()
	if err != nil {
		t.Fatalf("LOCK.ACQUIRE = %v", err)
	}
	// Decided on 0, 1, 2: the acquires to 3 and 4 may not have reached their
	// links yet (a loaded machine), and must still be refused.
	harness.Eventually(t, "backends 3 and 4 refused the lock", func() bool { return refused.Load() >= 2 })
	refuse.Store(false)
	windowEnd := invoked.Add(ttl)
	t.Logf("LOCK.ACQUIRE %s %s %v through replica 1: token %d", key, owner, ttl, tok)
	if n := h1.Holders(key, owner); n != 3 {
		t.Fatalf("the lock is on %d backends; want 3 (0, 1, 2)", n)
	}

	// 2. Its extend reaches backends 0 and 1 only; no answer.
	holdExtend.Store(true)
	sent := time.Now()
	err = r1.Do(ctx, "LOCK.EXTEND", key, owner, 4000).Err() // NOQUORUM at its node wait: an unknown outcome
	t.Logf("LOCK.EXTEND %s %s 4000 through replica 1 (held on the link to backend 2): %v after %v", key, owner, err, time.Since(sent).Round(time.Millisecond))
	harness.Eventually(t, "the extend on backends 0 and 1", func() bool {
		return servers[0].Client().PTTL(ctx, key).Val() > 2*time.Second &&
			servers[1].Client().PTTL(ctx, key).Val() > 2*time.Second
	})

	// 3. The lock's window ends: gone from backend 2, whose note keeps the delay.
	harness.Eventually(t, "the key to expire on backend 2", func() bool {
		return servers[2].Client().Exists(ctx, key).Val() == 0
	})
	if time.Now().Before(windowEnd) {
		time.Sleep(time.Until(windowEnd))
	}
	state(fmt.Sprintf("%v after the lock's window ended", time.Since(windowEnd).Round(time.Millisecond)))

	// 4. The holder's release: not held (3 of 5 absent), but it deletes on 0 and 1.
	n, err := r2.Do(ctx, "LOCK.RELEASE", key, owner).Int64()
	t.Logf("LOCK.RELEASE %s %s through replica 2 = %d, %v", key, owner, n, err)
	if err != nil || n != 0 {
		t.Fatalf("LOCK.RELEASE = %d, %v; want 0 (not held on a majority)", n, err)
	}
	state("after the release that answered 0")

	// 5. Another owner's SET NX PX, inside the lock-delay.
	ok, err := r2.SetNX(ctx, key, "plain-b", 2*time.Second).Result()
	at := time.Since(windowEnd)
	state("after SET NX PX by plain-b")
	if at >= delay {
		t.Fatalf("the test ran too slowly: SET NX sent %v after the window ended (delay %v)", at, delay)
	}
	if err != nil {
		t.Fatalf("SET NX PX = %v", err)
	}
	if ok {
		t.Fatalf("SET %s plain-b NX PX through replica 2 granted %v after %s's lock window ended, inside its %v lock-delay: "+
			"%s was never released by an answer (its LOCK.RELEASE answered 0), but that release deleted the lock and its note "+
			"(delifeq.lua) on backends 0 and 1, where the unanswered LOCK.EXTEND had kept the key; with backends 3 and 4, "+
			"which never held it, SET NX found Q backends without a note",
			key, at.Round(time.Millisecond), owner, delay, owner)
	}
}

// ldScriptArgs splits an EVAL/EVALSHA command into its keys and argv.
func ldScriptArgs(args []string) (keys, argv []string, ok bool) {
	if len(args) < 3 || !strings.EqualFold(args[0], "evalsha") && !strings.EqualFold(args[0], "eval") {
		return nil, nil, false
	}
	nk, err := strconv.Atoi(args[2])
	if err != nil || len(args) < 3+nk {
		return nil, nil, false
	}
	return args[3 : 3+nk], args[3+nk:], true
}

// TestReleasedLockIsFreeAtOnceEverywhere: the other side of the marked
// release. A native lock (lock-delay 5 s) released with an answer of 1 has
// no note left on a quorum of backends by the time the answer arrives (the
// marks are removed before it), so another owner's SET NX through another
// replica is granted at once, as before; the last marks go soon after.
func TestReleasedLockIsFreeAtOnceEverywhere(t *testing.T) {
	servers := redistest.Start(t, 5)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Quarantine = false
	cfg.NativeLockDelay = 5 * time.Second
	for _, s := range servers {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: s.Addr})
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h1 := harness.Of(t, servers, cfg)
	_, h1.Addr = h1.Serve()
	h2 := harness.Of(t, servers, cfg)
	_, h2.Addr = h2.Serve()
	r1, r2 := h1.Client(), h2.Client()
	ctx := t.Context()
	for i := range 20 {
		key := fmt.Sprintf("ld:free:%d", i)
		if _, err := r1.Do(ctx, "LOCK.ACQUIRE", key, "a", 10000).Int64(); err != nil {
			t.Fatalf("LOCK.ACQUIRE = %v", err)
		}
		if n, err := r1.Do(ctx, "LOCK.RELEASE", key, "a").Int64(); err != nil || n != 1 {
			t.Fatalf("LOCK.RELEASE = %d, %v", n, err)
		}
		free := 0
		for _, s := range servers {
			if s.Client().Exists(ctx, quorum.MetaKey(key)).Val() == 0 {
				free++
			}
		}
		if free < 3 {
			t.Fatalf("%d of 5 backends free of the lock's note after LOCK.RELEASE answered 1; want a quorum (3) at once", free)
		}
		if ok, err := r2.SetNX(ctx, key, "b", time.Second).Result(); err != nil || !ok {
			t.Fatalf("SET NX through replica 2 right after the release = %v, %v; want granted", ok, err)
		}
		harness.Eventually(t, "every backend free of the note", func() bool {
			for _, s := range servers {
				if n := s.Client().Get(ctx, quorum.MetaKey(key)).Val(); strings.HasPrefix(n, "!") {
					return false
				}
			}
			return true
		})
	}
}
