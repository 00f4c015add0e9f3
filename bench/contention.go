package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// rlockContention: Redisson's RLock as its threads contend for one lock
// (issue 26's rows): two clients, at addrs[0] and addrs[1] (through the
// proxy: two replicas), of perClient threads each, every thread taking and
// releasing the one lock over and over. A refused thread waits as
// Redisson's lock() does: for the unlock message on the lock's channel, of
// which its client wakes one waiting thread per message (LockPubSub's
// latch), or for the TTL it was told. Cycles per second over all threads.
func rlockContention(s rlockScripts, name string, addrs [2]string, perClient int, d time.Duration) (float64, error) {
	key := "rlock:contend:" + name
	channel := "redisson_lock__channel:{" + key + "}"
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		count   atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	fail := func(err error) {
		if ctx.Err() == nil {
			errOnce.Do(func() { first = err })
		}
	}
	start := time.Now()
	for ci, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: perClient + 2, MaxRetries: -1})
		defer c.Close()
		sub := c.Subscribe(context.Background(), channel)
		defer sub.Close()
		if _, err := sub.Receive(context.Background()); err != nil {
			return 0, err
		}
		wake := make(chan struct{}, perClient)
		go func() {
			for range sub.Channel() {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}()
		for th := range perClient {
			owner := fmt.Sprintf("bench-%s-%d:%d", name, ci, th)
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					for held := false; !held; {
						ttl, err := s.lock.Run(ctx, c, []string{key}, 30000, owner).Int64()
						switch {
						case errors.Is(err, redis.Nil):
							held = true
							continue
						case err != nil:
							fail(fmt.Errorf("lock: %w", err))
							return
						}
						select {
						case <-wake:
						case <-time.After(time.Duration(ttl) * time.Millisecond):
						case <-ctx.Done():
							return
						}
					}
					keys := []string{key, channel, fmt.Sprintf("redisson_unlock_latch:{%s}:%s-%d", key, owner, n)}
					// Never left held when the time is up: the others would wait out its TTL.
					if v, err := s.unlock.Run(context.Background(), c, keys, 0, 30000, owner, "PUBLISH", 5000).Int(); err != nil || v != 1 {
						fail(fmt.Errorf("unlock: %v %v", v, err))
						return
					}
					count.Add(1)
				}
			})
		}
	}
	wg.Wait()
	return float64(count.Load()) / time.Since(start).Seconds(), first
}
