package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

const unlockScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`

// rb is one redis-benchmark result.
type rb struct{ rps, p50, p99 float64 }

// redisBenchmark runs redis-benchmark against addr and reads its CSV line.
func redisBenchmark(addr string, clients, pipeline, requests int, command ...string) (rb, error) {
	host, port, _ := net.SplitHostPort(addr)
	args := append([]string{"-h", host, "-p", port, "-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
		"-P", strconv.Itoa(pipeline), "-r", "1000000", "--csv"}, command...)
	var stderr strings.Builder
	cmd := exec.Command("redis-benchmark", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return rb{}, fmt.Errorf("redis-benchmark %v: %w: %s%s", args, err, out, stderr.String())
	}
	// The CSV does not escape quotes inside the test name (a script has
	// them), so read the seven numeric fields from the end of the line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	fields := strings.Split(strings.Trim(lines[len(lines)-1], `"`), `","`)
	if len(lines) < 2 || len(fields) < 8 {
		return rb{}, fmt.Errorf("redis-benchmark output %q", out)
	}
	num := fields[len(fields)-7:] // rps, avg, min, p50, p95, p99, max
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	return rb{rps: f(num[0]), p50: f(num[3]), p99: f(num[5])}, nil
}

var setCommand = []string{"SET", "lock:__rand_int__", "v", "NX", "PX", "30000"}

// ownKeys is command with its <prefix>:__rand_int__ keys named after tag.
func ownKeys(command []string, tag string) []string {
	out := slices.Clone(command)
	for i, a := range out {
		if prefix, ok := strings.CutSuffix(a, ":__rand_int__"); ok {
			out[i] = prefix + ":" + tag + ":__rand_int__"
		}
	}
	return out
}

var unlockCommand = []string{"EVAL", unlockScript, "1", "lock:__rand_int__", "v"}

// fencedCommand is SET NX PX's native twin: the same lock, with a fencing
// token (one round where the holders' counters agree, else a raise too).
var fencedCommand = []string{"LOCK.ACQUIRE", "fenced:__rand_int__", "v", "30000"}

// cycles counts lock+unlock cycles per second from workers goroutines, each
// on its own key, for d. cycle performs one acquire and one release.
func cycles(workers int, d time.Duration, cycle func(ctx context.Context, worker, n int) error) (float64, error) {
	var (
		count   atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				if err := cycle(ctx, w, n); err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { first = err })
					}
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(count.Load()) / time.Since(start).Seconds(), first
}

// proxyCycles: go-redis through the proxy, SET NX PX then the unlock script,
// on keys named after name (a cycle cut off by the deadline leaves its lock).
func proxyCycles(name, addr string, workers int, d time.Duration) (float64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: workers, MaxRetries: -1})
	defer c.Close()
	return cycles(workers, d, func(ctx context.Context, w, n int) error {
		key, tok := fmt.Sprintf("cycle:%s:%d", name, w), fmt.Sprintf("t%d-%d", w, n)
		ok, err := c.SetNX(ctx, key, tok, 10*time.Second).Result()
		if err != nil || !ok {
			return fmt.Errorf("acquire: %v %v", ok, err)
		}
		if v, err := c.Eval(ctx, unlockScript, []string{key}, tok).Int(); err != nil || v != 1 {
			return fmt.Errorf("release: %v %v", v, err)
		}
		return nil
	})
}

// redsyncCycles: redsync v4 used directly on the same backends.
func redsyncCycles(backends []string, workers int, d time.Duration) (float64, error) {
	var pools []redsyncredis.Pool
	for _, addr := range backends {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: workers})
		defer c.Close()
		pools = append(pools, goredis.NewPool(c))
	}
	rs := redsync.New(pools...)
	return cycles(workers, d, func(ctx context.Context, w, n int) error {
		m := rs.NewMutex(fmt.Sprintf("cycle:redsync:%d", w), redsync.WithExpiry(10*time.Second), redsync.WithTries(1))
		if err := m.LockContext(ctx); err != nil {
			return fmt.Errorf("redsync lock: %w", err)
		}
		if ok, err := m.UnlockContext(ctx); err != nil || !ok {
			return fmt.Errorf("redsync unlock: %v %w", ok, err)
		}
		return nil
	})
}

// idleConnMemory opens n connections to the proxy, has each answer one
// PING so its state exists, and returns the proxy's RSS growth per connection.
func idleConnMemory(p *proxyProc, n int) (float64, error) {
	before := rss(p.cmd.Process.Pid)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			return 0, err
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return 0, err
		}
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
			return 0, fmt.Errorf("PING on connection %d: %q %v", len(conns), line, err)
		}
	}
	time.Sleep(500 * time.Millisecond) // let the proxy settle
	after := rss(p.cmd.Process.Pid)
	return float64(after-before) / float64(n), nil
}
