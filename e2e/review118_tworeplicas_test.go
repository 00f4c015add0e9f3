package e2e

import (
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview118SameUnlockOnTwoReplicasRaisesCount: Redisson 3.24+'s RLock,
// 3 backends all up, two proxy replicas, no backend missing any round.
// The owner locks twice (2 holds everywhere); its unlock #1 (latch L) is
// sent to replica 1 and, at the same moment, the same EVAL to replica 2 (a
// Redisson retry on another connection while the first attempt still
// runs). On each backend the first to arrive gives up one hold fresh (2 ->
// 1, latch "still held"), the other answers from that latch. Where the two
// interleave (replica 1 first on some backends, replica 2 first on the
// others), each sees `len(latchedHeld) > 0 && before > 0` and restoreHolds
// sets its fresh backends back to Pre = 2: both answer 0, and every
// backend ends at 2 holds while the owner has 1 (2 locks, 1 unlock).
// Unlock #2, the owner's last, answers 0 (must: 1, released) and the lock
// stays taken until its lease ends; another owner is refused.
func TestReview118SameUnlockOnTwoReplicasRaisesCount(t *testing.T) {
	h := harness.New(t, 3, nil)
	_, addr2 := h.Serve()
	c1 := h.Client()
	c2 := h.Client(func(o *redis.Options) { o.Addr = addr2 })
	ctx := t.Context()
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	const lease = 30000
	for trial := 0; trial < 40; trial++ {
		name := fmt.Sprintf("{r118b-%d}", trial)
		ch := "redisson_lock__channel:" + name
		const owner = "uuid-118b:1"
		holds := func() []string { return holdsOn(h, name, owner) }
		for i := 0; i < 2; i++ {
			if err := c1.Eval(ctx, lock, []string{name}, lease, owner).Err(); err != redis.Nil {
				t.Fatalf("trial %d lock #%d: %v", trial, i+1, err)
			}
		}
		harness.Eventually(t, "2 holds everywhere", func() bool {
			for _, x := range holds() {
				if x != "2" {
					return false
				}
			}
			return true
		})
		latch := "redisson_unlock_latch:" + name + ":req-1"
		var wg sync.WaitGroup
		res := make([]string, 2)
		for i, c := range []*redis.Client{c1, c2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := c.Eval(ctx, unlock, []string{name, ch, latch}, 0, lease, owner, "publish", 30000).Result()
				res[i] = fmt.Sprint(v, " ", err)
			}()
		}
		wg.Wait()
		after := holds()
		v, err := c1.Eval(ctx, unlock, []string{name, ch, "redisson_unlock_latch:" + name + ":req-2"}, 0, lease, owner, "publish", 30000).Result()
		t.Logf("trial %d: unlock #1 on both replicas = %v; holds %v; unlock #2 = %v, %v; holds %v", trial, res, after, v, err, holds())
		if err != nil || v != int64(1) {
			other := "granted"
			if err := c1.Eval(ctx, lock, []string{name}, lease, "uuid-other:1").Err(); err != redis.Nil {
				other = fmt.Sprint("refused: ", err)
			}
			t.Fatalf("trial %d: unlock #2 (the owner's last: 2 locks, 2 unlocks) = %v, %v; want 1 (holds after unlock #1, sent to both replicas at once, answered %v: %v); another owner's lock after it: %s", trial, v, err, res, after, other)
		}
	}
}
