package e2e

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
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestHostileSoak runs honest lock clients in alternating phases, alone and
// beside a mix of hostile ones (every attack of issue 11 at once), so both
// sides of the comparison see the same machine load. It fails when the
// attacks starve honest clients (any honest command failing, or their p99
// beyond 4x the quiet one plus 25 ms: issue 11's findings were 22x and 90x),
// or when the heap grows without bound. The 2x target itself is a speed
// claim and lives in BenchmarkHostileSoak, which prints the ratio measured in
// one run. REDLOCK_SOAK sets the total time of each side (default 3s).
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
	r := soak(t, d)
	t.Log(r)
	if r.errs > 0 {
		t.Errorf("%d honest lock commands failed during the attack", r.errs)
	}
	if r.attacked > 4*r.quiet+25*time.Millisecond {
		t.Errorf("honest clients starved: lock p99 %v under attack, %v quiet", r.attacked, r.quiet)
	}
	if grown := int64(r.peak) - int64(r.before); grown > 128<<20 {
		t.Errorf("the heap grew by %d MiB during the attack", grown>>20)
	}
}

// BenchmarkHostileSoak measures issue 11's target, honest lock p99 under
// attack within 2x of the quiet one, and prints the ratio of one run.
func BenchmarkHostileSoak(b *testing.B) {
	var r soakResult
	for b.Loop() {
		r = soak(b, 3*time.Second)
	}
	b.ReportMetric(float64(r.attacked)/float64(r.quiet), "p99-ratio")
	b.Log(r)
}

type soakResult struct {
	quiet, attacked time.Duration // honest lock p99
	errs            int           // honest commands that failed under attack
	before, peak    uint64        // heap in use before the attacks, and at most during them
}

func (r soakResult) String() string {
	return fmt.Sprintf("honest lock p99: %v quiet, %v under attack (%.1fx); heap %d MiB before, %d MiB at most during",
		r.quiet, r.attacked, float64(r.attacked)/float64(r.quiet), r.before>>20, r.peak>>20)
}

// soak alternates three quiet and three attacked phases of d/3 each.
func soak(t testing.TB, d time.Duration) soakResult {
	h := harness.New(t, 3, func(c *config.Config) {
		c.WriteTimeout, c.MaxClients = time.Second, 200
		c.Users = []config.User{{Name: "honest", Password: "h-pass"}, {Name: "mallory", Password: "m-pass", Prefix: "m:"}}
	})
	var r soakResult
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	r.before = m.HeapInuse
	var quiet, attacked []time.Duration
	for range 3 {
		lat, _ := honestLocks(t, h, d/3)
		quiet = append(quiet, lat...)
		lat, errs, peak := underAttack(t, h, d/3)
		attacked = append(attacked, lat...)
		r.errs += errs
		r.peak = max(r.peak, peak)
	}
	r.quiet, r.attacked = p99(t, quiet), p99(t, attacked)
	return r
}

// underAttack runs honestLocks for d beside every hostile client; it returns
// the honest latencies and failures, and the peak heap in use.
func underAttack(t testing.TB, h *harness.Harness, d time.Duration) ([]time.Duration, int, uint64) {
	ctx, stop := context.WithCancel(t.Context())
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
			sleep(ctx, 100*time.Millisecond)
		}
	})
	lat, errs := honestLocks(t, h, d)
	stop()
	wg.Wait()
	return lat, errs, peak
}

func p99(t testing.TB, latencies []time.Duration) time.Duration {
	if len(latencies) == 0 {
		t.Fatal("no honest lock ran")
	}
	slices.Sort(latencies)
	return latencies[len(latencies)*99/100]
}

// honestLocks runs four clients that lock and unlock for d; it returns the
// latencies of their lock commands and how many failed.
func honestLocks(t testing.TB, h *harness.Harness, d time.Duration) ([]time.Duration, int) {
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		wg        sync.WaitGroup
	)
	end := time.Now().Add(d)
	for i := range 4 {
		c := h.Client(func(o *redis.Options) { o.Username, o.Password = "honest", "h-pass" })
		wg.Go(func() {
			ctx := context.Background()
			for n := 0; time.Now().Before(end); n++ {
				key, owner := fmt.Sprint("lock:soak", i), fmt.Sprint("o", n)
				start := time.Now()
				ok, err := c.SetNX(ctx, key, owner, 5*time.Second).Result()
				took := time.Since(start)
				if err == nil && ok {
					err = c.Eval(ctx, harness.UnlockScript, []string{key}, owner).Err()
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
	return latencies, errs
}

// hostileClients are the attacks of issue 11, each one round of it.
func hostileClients(h *harness.Harness) []func(ctx context.Context) {
	raw := func(payload string, readReplies bool) func(ctx context.Context) {
		return func(ctx context.Context) {
			nc, err := net.Dial("tcp", h.Addr)
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
		c := redis.NewClient(&redis.Options{Addr: h.Addr, Username: "mallory", Password: "m-pass", MaxRetries: -1})
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
