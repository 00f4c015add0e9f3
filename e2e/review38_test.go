package e2e

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview38MultiKeyAcquireRollbackHonoursPin: the change makes the
// rollback of an acquire (undo.lua) leave a lock alone while an extend from
// another connection pinned its promise: "the extend answered 1 for that
// window, and whichever connection closes, nobody else may take the lock
// inside it". node-redlock's multi-key acquire (allKeys) takes the keys one
// quorum round each and, when a later key is held elsewhere, rolls the
// earlier ones back with releaseAll -> releaseLock -> Engine.Release, the
// plain compare-and-delete that ignores the pin. The owner's extend of the
// first key from another connection (30 s, answered 1) lands between the
// first key's grant and that rollback; the rollback deletes the lock, and a
// third client takes it inside the promised 30 s: two owners. (On one Redis
// the multi-key script checks every key first and sets none: no extend
// could ever answer 1.)
//
// bsm/redislock v0.10's multi-key obtain (bsmObtain) rolls back the same
// way (releaseAll), before its re-obtain answers nil.
func TestReview38MultiKeyAcquireRollbackHonoursPin(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"node-redlock", "bsm-v10"} {
		t.Run(how, func(t *testing.T) { multiKeyRollbackVsPin(t, how) })
	}
}

func multiKeyRollbackVsPin(t *testing.T, how string) {
	h := harness.New(t, 5, nil)
	ctx := t.Context()
	a, b, c := oneConn(h), oneConn(h), oneConn(h)
	acquire := clientScript(t, shaRedlock5Acq)
	value := "tokA"
	if how == "bsm-v10" {
		value = "tokA-m1"
	}
	hits := 0
	for i := range 200 {
		k1, k2 := fmt.Sprintf("review38:multi:%s:%d:1", how, i), fmt.Sprintf("review38:multi:%s:%d:2", how, i)
		if err := c.Do(ctx, "SET", k2, "other", "NX", "PX", 60000).Err(); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var extended atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := b.Pipeline()
				cmds := make([]*redis.Cmd, 20)
				for j := range cmds {
					cmds[j] = p.Eval(ctx, harness.ExtendScript, []string{k1}, value, 30000)
				}
				_, _ = p.Exec(ctx)
				for _, x := range cmds {
					if n, _ := x.Int(); n == 1 {
						extended.Add(1)
					}
				}
			}
		})
		time.Sleep(time.Duration(i%5) * 200 * time.Microsecond)
		var (
			n   any
			err error
		)
		if how == "bsm-v10" {
			n, err = a.EvalSha(ctx, bsmV10Obtain, []string{k1, k2}, value, 4, 10000).Result()
			if errors.Is(err, redis.Nil) {
				n, err = int64(0), nil
			}
		} else {
			n, err = a.Eval(ctx, acquire, []string{k1, k2}, value, 10000).Result()
		}
		close(stop)
		wg.Wait()
		if err != nil || n != int64(0) {
			t.Fatalf("multi-key acquire with the second key held elsewhere = %v, %v; want 0 / nil", n, err)
		}
		if extended.Load() == 0 {
			continue
		}
		hits++
		if ok, err := c.SetNX(ctx, k1, "tokC", time.Minute).Result(); err == nil && ok {
			t.Fatalf("%s: an extend from another connection answered 1 for 30 s (%d times), then the failed multi-key acquire's rollback deleted it: a third client took it at once (two owners)",
				k1, extended.Load())
		}
	}
	t.Logf("%d of 200 rounds had an extend answered 1 between grant and rollback", hits)
}

// TestReview38OwnConnectionRenewalReleasedAtClose: README: "Sent on the
// connection that holds the lock, the lock is released when that
// connection closes; sent on any other connection or replica, the extend
// also pins its promise". SET key value IFEQ value PX ms (setIfEq, Redis
// 8.4's renewal) calls Engine.Extend directly instead of extendLock, and
// SET XX with the holder's value (Overwrite, setxx.lua) pins whoever sends
// it: sent on the booking connection itself, both pin the lock, and that
// connection's close leaves a connection-bound lock to the 30 s asked
// instead of releasing it (liveness: the lock stays taken 30 s after its
// holder's close).
func TestReview38OwnConnectionRenewalReleasedAtClose(t *testing.T) {
	for _, how := range []string{"eval-extend", "set-ifeq", "set-xx"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarnessWith(t, func(c *config.Config) { c.NativeLockDelay, c.LockDelay = 0, 0 })
			ctx := t.Context()
			a, c := oneConn(h), oneConn(h)
			key := "review38:own:" + how
			if err := a.Do(ctx, "SET", key, "tokA", "NX").Err(); err != nil {
				t.Fatal(err)
			}
			var err error
			switch how {
			case "eval-extend": // the control: extendLock's ExtendRound, no pin
				err = a.Eval(ctx, harness.ExtendScript, []string{key}, "tokA", 30000).Err()
			case "set-ifeq":
				err = a.Do(ctx, "SET", key, "tokA", "IFEQ", "tokA", "PX", 30000).Err()
			case "set-xx":
				err = a.Do(ctx, "SET", key, "tokA", "XX", "PX", 30000).Err()
			}
			if err != nil {
				t.Skipf("%s on the booking connection: %v", how, err)
			}
			_ = a.Close()
			deadline := time.Now().Add(3 * sessionTick)
			for {
				if ok, err := c.SetNX(ctx, key, "tokC", time.Minute).Result(); err == nil && ok {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s sent on the connection that booked the lock, then that connection closed: the lock is still held %v later (pinned as if from elsewhere)", how, 3*sessionTick)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
