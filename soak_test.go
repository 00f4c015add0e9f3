package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// TestHostileSoak runs honest lock clients, first alone and then beside a
// mix of hostile ones (every attack of issue 11 at once), and requires the
// honest clients' lock p99 to stay within twice the quiet one (plus 10 ms
// for a shared 2-core machine) and the proxy's heap to stay bounded. Each
// phase lasts REDLOCK_SOAK (default 3s).
func TestHostileSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for a few seconds")
	}
	d := 3 * time.Second
	if v := os.Getenv("REDLOCK_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("REDLOCK_SOAK: %v", err)
		}
	}
	h := newHarness(t, 3, func(c *config.Config) {
		c.WriteTimeout, c.MaxClients = time.Second, 200
		c.Users = []config.User{{Name: "honest", Password: "h-pass"}, {Name: "mallory", Password: "m-pass", Prefix: "m:"}}
	})
	quiet, _ := honestLocks(t, h, d)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	ctx, stop := context.WithTimeout(t.Context(), d)
	defer stop()
	var wg sync.WaitGroup
	for i, attack := range hostileClients(h) {
		if only := os.Getenv("REDLOCK_SOAK_ONLY"); only != "" && only != fmt.Sprint(i) {
			continue // one attack alone, to see what it costs
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				attack(ctx)
			}
		})
	}
	var peak uint64
	wg.Go(func() {
		for ctx.Err() == nil {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			time.Sleep(100 * time.Millisecond)
		}
	})
	attacked, errs := honestLocks(t, h, d)
	wg.Wait()
	t.Logf("honest lock p99: %v quiet, %v under attack; heap %d MiB before, %d MiB at most during", quiet, attacked,
		before.HeapInuse>>20, peak>>20)
	if errs > 0 {
		t.Errorf("%d honest lock commands failed during the attack", errs)
	}
	if attacked > 2*quiet+10*time.Millisecond {
		t.Errorf("honest lock p99 %v under attack, %v quiet: more than twice", attacked, quiet)
	}
	if grown := int64(peak) - int64(before.HeapInuse); grown > 128<<20 {
		t.Errorf("the heap grew by %d MiB during the attack", grown>>20)
	}
}

// honestLocks runs four clients that lock and unlock for d; it returns the
// p99 of their lock commands and how many failed.
func honestLocks(t *testing.T, h *harness, d time.Duration) (time.Duration, int) {
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		wg        sync.WaitGroup
	)
	end := time.Now().Add(d)
	for i := range 4 {
		c := h.client(func(o *redis.Options) { o.Username, o.Password = "honest", "h-pass" })
		wg.Go(func() {
			ctx := context.Background()
			for n := 0; time.Now().Before(end); n++ {
				key, owner := fmt.Sprint("lock:soak", i), fmt.Sprint("o", n)
				start := time.Now()
				ok, err := c.SetNX(ctx, key, owner, 5*time.Second).Result()
				took := time.Since(start)
				if err == nil && ok {
					err = c.Eval(ctx, unlockScript, []string{key}, owner).Err()
				}
				mu.Lock()
				latencies = append(latencies, took)
				if err != nil || !ok {
					errs++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(latencies)
	if len(latencies) == 0 {
		t.Fatal("no honest lock ran")
	}
	return latencies[len(latencies)*99/100], errs
}

// hostileClients are the attacks of issue 11, each one round of it.
func hostileClients(h *harness) []func(ctx context.Context) {
	raw := func(payload string, readReplies bool) func(ctx context.Context) {
		return func(ctx context.Context) {
			nc, err := net.Dial("tcp", h.addr)
			if err != nil {
				return
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
			_, _ = nc.Write([]byte(payload))
			if readReplies {
				buf := make([]byte, 4096)
				for ctx.Err() == nil {
					if _, err := nc.Read(buf); err != nil {
						return
					}
				}
			}
			sleep(ctx, time.Second) // hold the connection, never reading
		}
	}
	mallory := func(ctx context.Context, do func(c *redis.Client)) {
		c := redis.NewClient(&redis.Options{Addr: h.addr, Username: "mallory", Password: "m-pass", MaxRetries: -1})
		defer c.Close()
		do(c)
	}
	var patterns []any
	for n := range 200 {
		patterns = append(patterns, strings.Join(strings.Split("abcdefghijklmnopqrstuvwxy", ""), "*")+fmt.Sprint("*", n))
	}
	return []func(ctx context.Context){
		raw("*9223372036854775807\r\n", true),
		raw("*2147483647\r\n", true),
		raw("*2\r\n$4\r\nECHO\r\n$1000000\r\n"+strings.Repeat("x", 1000), false),
		raw(strings.Repeat("X\r\n", 100000), false),
		raw("*1\r\n$x\r\n", true),
		func(ctx context.Context) { // wrong AUTHs as fast as the proxy answers
			mallory(ctx, func(c *redis.Client) {
				for range 50 {
					if ctx.Err() != nil {
						return
					}
					_ = c.Do(ctx, "auth", "mallory", "guess").Err()
				}
			})
		},
		func(ctx context.Context) { // pattern bombs and huge channel names
			mallory(ctx, func(c *redis.Client) {
				_ = c.Do(ctx, append([]any{"psubscribe"}, patterns...)...).Err()
				_ = c.Publish(ctx, strings.Repeat("a", 1<<20), "x").Err()
				_ = c.Publish(ctx, "redisson_lock__channel:{lock:soak0}", "0").Err()
				sleep(ctx, 100*time.Millisecond)
			})
		},
		func(ctx context.Context) { // another tenant's locks
			mallory(ctx, func(c *redis.Client) {
				_ = c.SetNX(ctx, "lock:soak1", "stolen", time.Second).Err()
				_ = c.Do(ctx, "script", "flush").Err()
				sleep(ctx, 50*time.Millisecond)
			})
		},
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
