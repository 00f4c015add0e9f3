// Command bsm10 runs bsm/redislock v0.10 (the real client, from the Go module
// proxy) against REDLOCK_ADDR=host:port: obtain of one key and of several (all
// or none), contention, re-obtain by token with new metadata, TTL, refresh,
// release, ErrLockNotHeld, obtain with retry. It exits 1 on the first failed
// check and prints "passed" at the end. e2e TestBsmRedislockV10Client runs it
// against the proxy; against one plain redis-server it passes the same way.
// It is a module of its own because the repository's tests use v0.9.4.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

func check(ok bool, what string, args ...any) {
	if !ok {
		fmt.Printf("FAIL: "+what+"\n", args...)
		os.Exit(1)
	}
	fmt.Printf("ok: "+what+"\n", args...)
}

func main() {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("REDLOCK_ADDR"), MaxRetries: -1})
	defer c.Close()
	locker := redislock.New(c)

	a, err := locker.Obtain(ctx, "b10c:a", 2*time.Second, nil)
	check(err == nil, "Obtain of one key: %v", err)
	_, err = locker.Obtain(ctx, "b10c:a", time.Second, nil)
	check(errors.Is(err, redislock.ErrNotObtained), "a second Obtain is refused: %v", err)
	ttl, err := a.TTL(ctx)
	check(err == nil && ttl > 1500*time.Millisecond && ttl <= 2*time.Second, "TTL within the 2 s: %v, %v", ttl, err)
	check(a.Refresh(ctx, 5*time.Second, nil) == nil, "Refresh to 5 s")
	ttl, _ = a.TTL(ctx)
	check(ttl > 4*time.Second, "TTL after Refresh: %v", ttl)
	check(a.Release(ctx) == nil, "Release")
	check(errors.Is(a.Release(ctx), redislock.ErrLockNotHeld), "a second Release: ErrLockNotHeld")
	ttl, err = a.TTL(ctx)
	check(ttl == 0 && err == nil, "TTL of a released lock: %v, %v", ttl, err)

	keys := []string{"b10c:m1", "b10c:m2", "b10c:m3"}
	m, err := locker.ObtainMulti(ctx, keys, 3*time.Second, &redislock.Options{Metadata: "m1"})
	check(err == nil, "ObtainMulti of three keys: %v", err)
	_, err = locker.ObtainMulti(ctx, []string{"b10c:m4", "b10c:m2"}, 3*time.Second, nil)
	check(errors.Is(err, redislock.ErrNotObtained), "ObtainMulti over a held key is refused: %v", err)
	n, _ := c.Exists(ctx, "b10c:m4").Result()
	check(n == 0, "and takes none of its keys (b10c:m4 exists: %d)", n)
	again, err := locker.ObtainMulti(ctx, keys, 4*time.Second, &redislock.Options{Token: m.Token(), Metadata: "m2"})
	check(err == nil && again.Metadata() == "m2", "re-obtained by its token with new metadata: %v", err)
	v, _ := c.Get(ctx, "b10c:m2").Result()
	check(v == m.Token()+"m2", "the value carries the new metadata: %q", v)
	check(again.Release(ctx) == nil, "Release of every key")
	n, _ = c.Exists(ctx, keys...).Result()
	check(n == 0, "every key free after Release: %d left", n)

	held, err := locker.Obtain(ctx, "b10c:r", 300*time.Millisecond, nil)
	check(err == nil, "Obtain for a retry: %v", err)
	start := time.Now()
	got, err := locker.Obtain(ctx, "b10c:r", time.Second, &redislock.Options{RetryStrategy: redislock.LinearBackoff(50 * time.Millisecond)})
	check(err == nil && time.Since(start) < 2*time.Second, "Obtain with retry once the first expired: %v after %v", err, time.Since(start))
	_ = held
	check(got.Release(ctx) == nil, "its Release")

	var wins sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for range 8 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			if l, err := locker.Obtain(ctx, "b10c:race", 2*time.Second, nil); err == nil {
				mu.Lock()
				winners++
				mu.Unlock()
				_ = l
			}
		}()
	}
	wins.Wait()
	check(winners == 1, "8 racing Obtains, one winner: %d", winners)
	fmt.Println("passed")
}
