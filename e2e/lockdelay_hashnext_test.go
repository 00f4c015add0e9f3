package e2e

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestLateFinishingNeverTouchesTheOwnersNextLock (helper-82, two owners;
// failed 4 of 4 on 98bb72b, seen): finishLate ran in the background, outside
// the key's lock, for up to ownWindow, and its OpHashUnhold ("all") deleted
// whatever holds the owner had on a node it had not heard from. N=5, lock_delay 0: a Redisson lock on 0, 1, 2 (3, 4
// refuse it); backend 2 stalls (SIGSTOP); the unlock deletes on 0, 1, hears
// absent from 3, 4, answers 1 and starts finishLate (2 not heard from).
// Backend 2 wakes; the same Redisson thread (same "<uuid>:<threadId>")
// takes the lock again, granted on 0, 1, 2 (3, 4 refuse). finishLate's next
// round deleted that NEW lock on backend 2 and counted it "released". The
// new lock lived on 0, 1 only, and another owner's SET NX PX got 2, 3, 4
// while the first owner was well inside its 30 s lease. Now finishLate only
// probes for its release's mark (and runs only where the release marked a
// note: with lock_delay 0 there is nothing to unmark).
func TestLateFinishingNeverTouchesTheOwnersNextLock(t *testing.T) {
	sleepBound(t)
	const (
		key   = "{hn:next}"
		owner = "uuid-n:1"
		lease = 30 * time.Second
	)
	var refuse atomic.Bool
	var refused atomic.Int32
	var mu sync.Mutex
	var unholdSent int // OpHashUnhold "all" sent on replica 1's link to backend 2
	hook := func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if !ok || len(keys) < 2 || keys[0] != key || keys[1] != quorum.MetaKey(key) {
			return nil
		}
		switch {
		case refuse.Load() && (i == 3 || i == 4) && len(keys) == 3 && keys[2] == quorum.QueueKey(key):
			refused.Add(1)
			return []string{"EVAL", "return {0, 1000, 0}", "0"}
		case i == 2 && len(argv) > 1 && argv[0] == owner && (argv[1] == "all" || argv[1] == "probe"):
			mu.Lock()
			unholdSent++
			mu.Unlock()
		}
		return nil
	}
	sent := func() int {
		mu.Lock()
		defer mu.Unlock()
		return unholdSent
	}
	servers, h1, h2 := hookedPair(t, 5, hook, func(c *config.Config) {
		c.NodeTimeout, c.LockDelay = time.Second, 0 // lock_delay off, as on one Redis
	})
	r1 := h1.Client(func(o *redis.Options) { o.PoolSize = 2 })
	r2 := h2.Client(func(o *redis.Options) { o.PoolSize = 2 })
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	redissonWarm(t, r1, r2)
	state := func(when string) { hashState(t, servers, key, "", when) }
	take := func(what string) {
		refused.Store(0)
		refuse.Store(true)
		if err := r1.Eval(ctx, lock, []string{key}, lease.Milliseconds(), owner).Err(); err != redis.Nil {
			t.Fatalf("%s: Redisson lock = %v; want nil (granted)", what, err)
		}
		harness.Eventually(t, "backends 3 and 4 refused the lock", func() bool { return refused.Load() >= 2 })
		refuse.Store(false)
	}
	take("first lock")
	state("after the first lock (0, 1, 2)")

	servers[2].Pause()
	resumed := false
	defer func() {
		if !resumed {
			servers[2].Resume()
		}
	}()
	res, err := r1.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, "redisson_unlock_latch:" + key + ":1"},
		0, lease.Milliseconds(), owner, "publish", 10000).Result()
	released := time.Now()
	t.Logf("unlock through replica 1 (backend 2 stalled) = %v, %v", res, err)
	if err != nil || res != int64(1) {
		t.Fatalf("unlock = %v, %v; want 1 (the scenario needs a Released with fewer than Q deletes)", res, err)
	}
	// Backend 2 is known down: finishLate's rounds (1 s, 2 s, 4 s, 8 s
	// apart) send it nothing and keep it "not heard from". Wake it between
	// the third round (~R+7 s) and the fourth (~R+15 s).
	time.Sleep(time.Until(released.Add(7500 * time.Millisecond)))
	n0 := sent()
	servers[2].Resume()
	resumed = true
	time.Sleep(1500 * time.Millisecond)
	state("backend 2 awake (its stale release ran)")

	// The same Redisson thread takes the lock again: granted on 0, 1, 2.
	taken := time.Now()
	take("the owner's next lock")
	for i, s := range servers {
		if n, _ := s.Client().HGet(ctx, key, owner).Int(); n != map[bool]int{true: 1, false: 0}[i < 3] {
			t.Fatalf("backend %d holds %d; want 1 on 0, 1, 2", i, n)
		}
	}
	state("after the owner's next lock")
	// Past the round that deleted it on 98bb72b (~R+15 s).
	time.Sleep(time.Until(released.Add(16500 * time.Millisecond)))
	t.Logf("late finishing rounds sent to backend 2 since it woke: %d", sent()-n0)
	state("after finishLate's last round")

	ok, err := r2.SetNX(ctx, key, "plain-b", 5*time.Second).Result()
	state("after SET NX PX by plain-b")
	if err == nil && ok {
		t.Fatalf("two owners: %s took the lock %v ago (lease %v, granted on 0, 1, 2), yet plain-b's SET NX PX was granted: "+
			"the background finishing (finishLate) of %s's earlier unlock deleted the new lock on backend 2",
			owner, time.Since(taken).Round(time.Millisecond), lease, owner)
	}
}
