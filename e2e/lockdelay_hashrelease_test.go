package e2e

import (
	"fmt"
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

// hashDelayRig: 5 backends, replica 1 through hooks (backends 3, 4 refuse the
// hash acquire of key while refuse is set; the links in holdOn hold
// owner's hash extend until the test ends), replica 2 direct.
type hashDelayRig struct {
	servers []*redistest.Server
	r1, r2  *redis.Client
	refuse  atomic.Bool
	refused atomic.Int32 // hash acquires refused on 3 and 4
	hold    atomic.Bool
}

func newHashDelayRig(t *testing.T, key, owner string, delay time.Duration, holdOn ...int) *hashDelayRig {
	rig := &hashDelayRig{}
	unblock := make(chan struct{})
	var once sync.Once
	hook := func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if !ok || len(keys) < 2 || keys[0] != key || keys[1] != quorum.MetaKey(key) {
			return nil
		}
		switch {
		case rig.refuse.Load() && (i == 3 || i == 4) && len(keys) == 3 && keys[2] == quorum.QueueKey(key):
			rig.refused.Add(1)
			return []string{"EVAL", "return {0, 1000, 0}", "0"}
		case rig.hold.Load() && len(keys) == 2 && len(argv) > 0 && argv[0] == owner:
			for _, h := range holdOn {
				if h == i {
					<-unblock
					return []string{"PING"}
				}
			}
		}
		return nil
	}
	servers, h1, h2 := hookedPair(t, 5, hook, func(c *config.Config) {
		c.NodeTimeout, c.LockDelay = time.Second, delay
	})
	t.Cleanup(func() { once.Do(func() { close(unblock) }) })
	rig.servers = servers
	rig.r1 = h1.Client(func(o *redis.Options) { o.PoolSize = 2 })
	rig.r2 = h2.Client(func(o *redis.Options) { o.PoolSize = 2 })
	redissonWarm(t, rig.r1, rig.r2)
	return rig
}

func (rig *hashDelayRig) state(t *testing.T, key, when string) {
	hashState(t, rig.servers, key, "", when)
}

// redissonWarm waits until each replica grants a Redisson lock and has it
// released: every backend has loaded the lock and unlock scripts (a late
// EVALSHA must not meet NOSCRIPT: it would do nothing).
func redissonWarm(t *testing.T, replicas ...*redis.Client) {
	t.Helper()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	for i, r := range replicas {
		w := fmt.Sprintf("{warm%d}", i+1)
		harness.Eventually(t, "replica ready", func() bool { return r.Eval(ctx, lock, []string{w}, 5000, "w:1").Err() == redis.Nil })
		if err := r.Eval(ctx, unlock, []string{w, "redisson_lock__channel:" + w, "redisson_unlock_latch:" + w}, 0, 5000, "w:1", "publish", 10000).Err(); err != nil {
			t.Fatalf("warm unlock = %v", err)
		}
	}
}

// hashState logs each backend's view of hash lock key: its holds, its note
// and, with latch, that unlock latch.
func hashState(t *testing.T, servers []*redistest.Server, key, latch, when string) {
	var b strings.Builder
	ctx := t.Context()
	for i, s := range servers {
		c := s.Client()
		fmt.Fprintf(&b, "\n  backend %d: key type %s %v pttl %v, note %q pttl %v", i, c.Type(ctx, key).Val(), c.HGetAll(ctx, key).Val(), c.PTTL(ctx, key).Val(),
			c.Get(ctx, quorum.MetaKey(key)).Val(), c.PTTL(ctx, quorum.MetaKey(key)).Val())
		if latch != "" {
			fmt.Fprintf(&b, ", latch %q", c.Get(ctx, latch).Val())
		}
		_ = c.Close()
	}
	t.Logf("%s:%s", when, b.String())
}

// lockOn012 takes key for owner through replica 1, holds times (a
// re-entered lock), on backends 0, 1, 2 only, then sends the watchdog's
// renewal, held on the links in holdOn, and waits until the lease ended
// where the renewal did not reach.
func (rig *hashDelayRig) lockOn012(t *testing.T, key, owner string, lease time.Duration, holds int, renewed ...int) time.Time {
	ctx := t.Context()
	lock, renew := clientScript(t, shaRLock), clientScript(t, shaRRenew)
	rig.refuse.Store(true)
	invoked := time.Now()
	for i := range holds {
		if err := rig.r1.Eval(ctx, lock, []string{key}, lease.Milliseconds(), owner).Err(); err != redis.Nil {
			t.Fatalf("Redisson lock #%d = %v; want nil (granted)", i+1, err)
		}
	}
	// The grant is decided on 0, 1, 2: the acquires to 3 and 4 may not have
	// reached their links yet (a loaded machine), and must still be refused.
	harness.Eventually(t, "backends 3 and 4 refused the lock", func() bool { return rig.refused.Load() >= int32(2*holds) })
	rig.refuse.Store(false)
	windowEnd := invoked.Add(lease)
	for i, s := range rig.servers {
		if n, _ := s.Client().HGet(ctx, key, owner).Int(); n != map[bool]int{true: holds, false: 0}[i < 3] {
			t.Fatalf("backend %d holds %d; want %d on 0, 1, 2 and none on 3, 4", i, n, holds)
		}
	}
	rig.hold.Store(true)
	err := rig.r1.Eval(ctx, renew, []string{key}, 6000, owner).Err()
	t.Logf("renewal through replica 1 (reaches backends %v only): %v", renewed, err)
	harness.Eventually(t, "the renewal landed", func() bool {
		for _, i := range renewed {
			if rig.servers[i].Client().PTTL(ctx, key).Val() < 3*time.Second {
				return false
			}
		}
		return true
	})
	harness.Eventually(t, "the lease to end on backend 2", func() bool { return rig.servers[2].Client().Exists(ctx, key).Val() == 0 })
	if time.Now().Before(windowEnd) {
		time.Sleep(time.Until(windowEnd))
	}
	return windowEnd
}

// TestHashUnlockOnOneOfFiveKeepsLockDelay (helper-79, failed 3 of 3 on
// 05acd9d, seen): ReleaseHash answers Released when the largest hold count
// among the nodes that answered is 1, however few of them deleted the lock:
// Q answers of which N-Q say "absent" leave ONE deleting node; it removed
// its marks then. Now only a release that deleted the lock on Q nodes does. N=5: a Redisson lock (lease
// 1.5 s, lock_delay 6 s) on 0, 1, 2 only; the watchdog's renewal reaches 0
// only (its answer never comes); the lease ends on 1 and 2 (their notes
// keep the delay). The holder's unlock, while 3 and 4 do not answer (paused
// 1 s: a node timeout), deletes on 0, hears "absent" from 1 and 2, and
// answers 1, unmarking 0. Then 0, 3 and 4 were free: another owner's SET NX
// PX was granted inside the lock-delay of a lock that expired unreleased on
// a majority (the same scenario with 3 and 4 answering gives nil and keeps
// the delay: TestNotHeldHashReleaseKeepsLockDelay).
func TestHashUnlockOnOneOfFiveKeepsLockDelay(t *testing.T) {
	const (
		key   = "{hd:one}"
		owner = "uuid-h:1"
		lease = 1500 * time.Millisecond
		delay = 6 * time.Second
	)
	rig := newHashDelayRig(t, key, owner, delay, 1, 2)
	ctx := t.Context()
	windowEnd := rig.lockOn012(t, key, owner, lease, 1, 0)
	rig.state(t, key, "after the lease ended")

	unlock := clientScript(t, shaRUnlock)
	rig.servers[3].Pause()
	rig.servers[4].Pause()
	res, err := rig.r2.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, "redisson_unlock_latch:" + key + ":1"},
		0, lease.Milliseconds(), owner, "publish", 10000).Result()
	rig.servers[3].Resume()
	rig.servers[4].Resume()
	t.Logf("unlock through replica 2 (backends 3, 4 paused) = %v, %v", res, err)
	rig.state(t, key, "after the unlock")

	var ok bool
	var at time.Duration
	for {
		ok, err = rig.r2.SetNX(ctx, key, "plain-b", 2*time.Second).Result()
		at = time.Since(windowEnd)
		if (err == nil && ok) || at > delay-2*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rig.state(t, key, "after SET NX PX by plain-b")
	if at >= delay {
		t.Fatalf("the test ran too slowly: %v after the lease (delay %v)", at, delay)
	}
	if err == nil && ok {
		t.Fatalf("SET NX PX by plain-b granted %v after %s's lease ended, inside its %v lock_delay: the lock expired unreleased on "+
			"backends 1 and 2 (and never was on 3, 4), yet its unlock answered %v (%v), deleting it on backend 0 alone, and removed its mark there",
			at.Round(time.Millisecond), owner, delay, res, err)
	}
}

// TestNotHeldHashReleaseKeepsLockDelay: the hash lock's release keeps its
// marks as a string lock's does (TestNotHeldReleaseEndsLockDelay). A
// Redisson lock (lock_delay 5 s) is granted on exactly Q=3 of 5 backends
// (0, 1, 2: 3 and 4 refuse it); the watchdog's renewal reaches 0 and 1 but
// is held on the link to 2 (no answer); the lease ends on 2, whose note
// keeps the delay. The holder's unlock through replica 2 answers nil (not
// held: 3 of 5 absent), yet deletes the hash on 0 and 1. Another owner's
// SET NX PX must find only 3 and 4 free: the unlock keeps the notes on 0
// and 1, marked, and never unmarks them. With the notes deleted by the
// unlock (no mark: failed, seen), it was granted inside the delay.
func TestNotHeldHashReleaseKeepsLockDelay(t *testing.T) {
	const key, owner, lease, delay = "{hd:nil}", "uuid-h:1", 1500 * time.Millisecond, 5 * time.Second
	rig := newHashDelayRig(t, key, owner, delay, 2)
	windowEnd := rig.lockOn012(t, key, owner, lease, 1, 0, 1)
	unlock := clientScript(t, shaRUnlock)
	res, err := rig.r2.Eval(t.Context(), unlock, []string{key, "redisson_lock__channel:" + key, "redisson_unlock_latch:" + key + ":1"},
		0, lease.Milliseconds(), owner, "publish", 10000).Result()
	t.Logf("unlock through replica 2 = %v, %v", res, err)
	if err != redis.Nil {
		t.Fatalf("unlock = %v, %v; want nil (not held on a majority)", res, err)
	}
	rig.refusedWithinDelay(t, key, owner, windowEnd, delay, "its unlock answered nil, but deleted the hash on backends 0 and 1, where the unanswered renewal had kept it")
}

// refusedWithinDelay fails the test unless another owner's SET NX PX of
// key, through replica 2, is refused inside the lock-delay after owner's
// lease ended at windowEnd.
func (rig *hashDelayRig) refusedWithinDelay(t *testing.T, key, owner string, windowEnd time.Time, delay time.Duration, why string) {
	t.Helper()
	rig.state(t, key, "before SET NX PX by plain-b")
	ok, err := rig.r2.SetNX(t.Context(), key, "plain-b", 2*time.Second).Result()
	at := time.Since(windowEnd)
	rig.state(t, key, "after SET NX PX by plain-b")
	if at >= delay {
		t.Fatalf("the test ran too slowly: SET NX sent %v after the lease ended (delay %v)", at, delay)
	}
	if err != nil || ok {
		t.Fatalf("SET NX PX through replica 2 %v after %s's lease ended = %v, %v; want refused inside its %v lock-delay: %s",
			at.Round(time.Millisecond), owner, ok, err, delay, why)
	}
}

// TestRedisson310UnlockKeepsLockDelay (helper-79, failed 3 of 3 on
// 05acd9d, seen): TestNotHeldHashReleaseKeepsLockDelay with Redisson
// 3.10.0's unlock script (a missing lock answers 1: absentReleased). N=5: a
// lock on 0, 1, 2; the renewal reaches 0 and 1 only; the lease ends on 2.
// The unlock deletes on 0 and 1, the three others say absent, which counts
// as released: Released, and its marks were removed; 0, 1, 3, 4 were free:
// another owner was granted inside the lock-delay. Two deletes of five are
// no release on a quorum: the marks stay.
func TestRedisson310UnlockKeepsLockDelay(t *testing.T) {
	const (
		key   = "{hd:310}"
		owner = "uuid-h:1"
		lease = 1500 * time.Millisecond
		delay = 5 * time.Second
	)
	rig := newHashDelayRig(t, key, owner, delay, 2)
	windowEnd := rig.lockOn012(t, key, owner, lease, 1, 0, 1)
	res, err := rig.r2.EvalSha(t.Context(), shaRUnlock310, []string{key, "redisson_lock__channel:" + key}, 0, lease.Milliseconds(), owner).Result()
	t.Logf("3.10 unlock through replica 2 = %v, %v", res, err)
	rig.refusedWithinDelay(t, key, owner, windowEnd, delay, "the lock lived on 0 and 1 only (2 of 5) and expired unreleased on the majority; the 3.10 unlock deleted it there")
}

// TestRetriedUnlockAnsweredFromLatchFreesTheLock (helper-79, failed 3 of 3
// on 05acd9d, seen): a released Redisson lock that was not free. Redisson (3.24+) retries an unlock that timed out
// with the same unlock latch. The first unlock (through replica 1) lands on
// every backend, but its answers from backends 1 and 2 come after the node
// timeout (links stalled 1.5 s): fewer than Q answers, NOQUORUM, and the
// marks it left ("!<id>#<delay>") stay: ReleaseHash only unmarks on
// Released. The retry (through replica 2) is answered from the latches on
// every backend: Released, answer 1, and no unmark (that release marked
// nothing). The lock its holder released was then taken for its whole
// lease plus lock_delay (the marks keep the note's TTL). Now a release marks
// with one id per unlock request (its latch: Engine.releaseMark), and a retry
// that finds that mark beside a latch that says released on Q nodes removes
// the marks before it answers.
func TestRetriedUnlockAnsweredFromLatchFreesTheLock(t *testing.T) {
	const (
		key   = "{hd:latch}"
		owner = "uuid-l:1"
		latch = "redisson_unlock_latch:{hd:latch}:req1"
	)
	var stall atomic.Bool
	var stalled [3]atomic.Bool
	hook := func(i int, args []string) []string {
		keys, _, ok := ldScriptArgs(args)
		if ok && stall.Load() && (i == 1 || i == 2) && len(keys) == 3 && keys[0] == key && keys[2] == latch && stalled[i].CompareAndSwap(false, true) {
			time.Sleep(1500 * time.Millisecond)
			t.Logf("hook: forwarding the stalled unlock to backend %d: %q", i, args)
		}
		return nil
	}
	servers, h1, h2 := hookedPair(t, 3, hook, func(c *config.Config) { c.LockDelay = 3 * time.Second })
	r1, r2 := h1.Client(), h2.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	redissonWarm(t, r1, r2)
	state := func(when string) { hashState(t, servers, key, latch, when) }
	if err := r1.Eval(ctx, lock, []string{key}, 20000, owner).Err(); err != redis.Nil {
		t.Fatalf("Redisson lock = %v; want nil (granted)", err)
	}
	args := []any{0, 20000, owner, "publish", 10000}
	stall.Store(true)
	res, err := r1.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, latch}, args...).Result()
	stall.Store(false)
	t.Logf("unlock through replica 1 (answers of backends 1, 2 late) = %v, %v", res, err)
	time.Sleep(1500 * time.Millisecond)
	state("after the first unlock")
	n, err := r2.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, latch}, args...).Int64()
	t.Logf("retried unlock (same latch) through replica 2 = %d, %v", n, err)
	if err != nil || n != 1 {
		t.Fatalf("retried unlock = %d, %v; want 1 (released, from the latches)", n, err)
	}
	released := time.Now()
	for {
		ok, err := r2.SetNX(ctx, key, "plain-b", time.Second).Result()
		if err == nil && ok {
			return
		}
		if time.Since(released) > 2*time.Second {
			state("after SET NX")
			t.Fatalf("SET NX PX by plain-b still refused (%v, %v) %v after the holder's unlock answered 1 (released): "+
				"the first attempt's marks stay for the lease (20 s) plus lock_delay", ok, err, time.Since(released).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
