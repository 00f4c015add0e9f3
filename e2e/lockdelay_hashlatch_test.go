package e2e

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestRetryAnsweredStillHeldOnlyFromAQuorumOfHolders (helper-81, safety; failed 3 of 3 on 449fcfd, seen): ReleaseHash
// answers StillHeld from the latches (before == 0 && latchedHeld >
// latchedReleased) without asking that Q nodes hold the lock, though every
// other StillHeld needs Q of them. A latch says "0" wherever the first
// attempt gave up a hold of two, before the engine knew whether a quorum
// did; an attempt that then answered NOQUORUM leaves such a latch on a
// minority. N=3 (Q=2), lock_delay 0. Owner A takes a Redisson lock twice
// (lease 3 s) on 0, 1, 2 and unlocks once at 2.4 s (latch L): backend 0
// gives up a hold (2 -> 1, latch "0", TTL 3 s more); the unlocks to 1 and 2
// are held on their links 1 s, past the lease, land after it ended there, and
// find the lock absent: NOQUORUM. Redisson retries the unlock with the same
// latch (its answer was lost); backend 2 does not answer this time (paused,
// one node timeout). The retry hears "0" from 0's latch and "absent" from
// 1 (one not-held answer: N-Q) and answers 0, still held: A holds one hold
// more, per the proxy. But A's lock lives on backend 0 alone; another owner's
// SET NX PX was granted on 1 and 2 at once, while A's hold (and its 3 s TTL
// from the unlock) was still there. Now a latched "still held" counts only
// where the owner holds the lock, and needs Q of them: NOQUORUM.
func TestRetryAnsweredStillHeldOnlyFromAQuorumOfHolders(t *testing.T) {
	const (
		key   = "{hl:latchstill}"
		owner = "uuid-a:1"
		latch = "redisson_unlock_latch:{hl:latchstill}:req1"
		lease = 3 * time.Second
	)
	var stall atomic.Bool
	var stalled [3]atomic.Bool
	hook := func(i int, args []string) []string {
		keys, _, ok := ldScriptArgs(args)
		if ok && stall.Load() && (i == 1 || i == 2) && len(keys) == 3 && keys[0] == key && keys[2] == latch && stalled[i].CompareAndSwap(false, true) {
			time.Sleep(1000 * time.Millisecond)
			t.Logf("hook: forwarding the stalled unlock to backend %d", i)
		}
		return nil
	}
	servers, h1, h2 := hookedPair(t, 3, hook, func(c *config.Config) { c.LockDelay = 0 })
	r1, r2 := h1.Client(), h2.Client()
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	redissonWarm(t, r1, r2)
	state := func(when string) { hashState(t, servers, key, latch, when) }
	taken := time.Now()
	for i := range 2 {
		if err := r1.Eval(ctx, lock, []string{key}, lease.Milliseconds(), owner).Err(); err != redis.Nil {
			t.Fatalf("Redisson lock #%d = %v; want nil (granted)", i+1, err)
		}
	}
	state("after two locks")
	time.Sleep(time.Until(taken.Add(lease - 600*time.Millisecond)))
	args := []any{0, lease.Milliseconds(), owner, "publish", 10000}
	stall.Store(true)
	res, err := r1.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, latch}, args...).Result()
	stall.Store(false)
	t.Logf("unlock #1 through replica 1 (to backends 1, 2 held past the lease) = %v, %v", res, err)
	harness.Eventually(t, "the stalled unlocks reached 1 and 2", func() bool { return stalled[1].Load() && stalled[2].Load() })
	time.Sleep(time.Until(taken.Add(lease + 500*time.Millisecond)))
	state("after the first attempt (lease over on 1 and 2)")

	servers[2].Pause()
	res, err = r2.Eval(ctx, unlock, []string{key, "redisson_lock__channel:" + key, latch}, args...).Result()
	servers[2].Resume()
	answered := time.Now()
	t.Logf("retried unlock (same latch) through replica 2, backend 2 paused = %v, %v", res, err)
	state("after the retry")
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "NOQUORUM"):
		return // the lock lives on backend 0 alone: not "still held"
	case err != nil || res != int64(0):
		t.Fatalf("retry = %v, %v; want NOQUORUM (one latch says still held, the lock is on one backend of three)", res, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		for _, r := range []*redis.Client{r1, r2} {
			if ok, err := r.SetNX(ctx, key, "plain-b", 5*time.Second).Result(); err == nil && ok {
				state("after SET NX PX by plain-b")
				t.Fatalf("SET NX PX by plain-b granted %v after %s's retried unlock answered 0 (still held: one hold left); "+
					"the StillHeld came from backend 0's latch alone (1 absent, 2 not answering), and the lock lived on 0 only",
					time.Since(answered).Round(time.Millisecond), owner)
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
