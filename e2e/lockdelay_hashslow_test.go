package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReleasedWithAHolderSlowerThanTwoTimeoutsIsFreed (helper-81, liveness;
// failed 3 of 3 on 449fcfd, seen): the case of
// TestReleasedWithASlowHolderIsFreedOnceItAnswers with backend 2 stalled
// 2.6 s instead of 1.3 s, i.e. past the release round (1 node timeout)
// AND the finishing OpHashUnhold round (1 more). 0 and 1 delete (marked),
// 3 and 4 say absent: Released, answer 1, only 2 deletes counted, so the
// marks stay; backend 2 then deletes the lock too (marked) when it wakes,
// but nothing was listening any more and nothing unmarked (releaseRest had
// no background follow-up, unlike Release's unmarkLate): the lock whose
// holder's unlock answered 1 stayed taken for its lease plus lock_delay.
// Now finishLate sends the finishing again to the nodes not heard from,
// which answers 1 where it finds the release's mark, and unmarks at Q.
func TestReleasedWithAHolderSlowerThanTwoTimeoutsIsFreed(t *testing.T) {
	releasedWithAStalledHolder(t, "{hd:slow2}", 2600*time.Millisecond, 6*time.Second)
}

// releasedWithAStalledHolder: a Redisson lock (lease 20 s, lock_delay 3 s)
// granted on 0, 1, 2 of 5 (3 and 4 refuse it); its holder unlocks it
// through replica 2 while backend 2 is stopped for stall (node timeout 1
// s). The unlock must answer 1, and once backend 2 is back another owner's
// SET NX PX must be granted within patience: the release's marks go.
func releasedWithAStalledHolder(t *testing.T, key string, stall, patience time.Duration) {
	const owner, lease, delay = "uuid-s:1", 20 * time.Second, 3 * time.Second
	rig := newHashDelayRig(t, key, owner, delay)
	ctx := t.Context()
	rig.refuse.Store(true)
	if err := rig.r1.Eval(ctx, clientScript(t, shaRLock), []string{key}, lease.Milliseconds(), owner).Err(); err != redis.Nil {
		t.Fatalf("Redisson lock = %v; want nil (granted)", err)
	}
	harness.Eventually(t, "backends 3 and 4 refused the lock", func() bool { return rig.refused.Load() >= 2 })
	rig.refuse.Store(false)
	rig.state(t, key, "after the lock")
	rig.servers[2].Pause()
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		time.Sleep(stall)
		rig.servers[2].Resume()
	}()
	res, err := rig.r2.Eval(ctx, clientScript(t, shaRUnlock), []string{key, "redisson_lock__channel:" + key, "redisson_unlock_latch:" + key + ":1"},
		0, lease.Milliseconds(), owner, "publish", 10000).Result()
	t.Logf("unlock through replica 2 (backend 2 stalled %v) = %v, %v", stall, res, err)
	if err != nil || res != int64(1) {
		t.Fatalf("unlock = %v, %v; want 1", res, err)
	}
	answered := time.Now()
	<-resumed
	rig.state(t, key, "after the unlock, backend 2 awake")
	for {
		ok, err := rig.r2.SetNX(ctx, key, "plain-b", time.Second).Result()
		if err == nil && ok {
			t.Logf("SET NX PX granted %v after the unlock answered 1", time.Since(answered).Round(time.Millisecond))
			return
		}
		if time.Since(answered) > patience {
			rig.state(t, key, "after SET NX")
			t.Fatalf("SET NX PX by plain-b still refused (%v, %v) %v after the holder's unlock answered 1 (released) inside its lease, "+
				"backend 2 awake: the marks of the release stay for the lease (20 s) plus lock_delay", ok, err, time.Since(answered).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
