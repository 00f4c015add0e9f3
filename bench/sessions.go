package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The costs of the lock-service features: what session locks cost the
// backends in renewals, and how fast a release hands the lock to a waiter.

// infoField reads one integer field of a server's INFO (section "" for the
// default sections).
func infoField(ctx context.Context, c *redis.Client, section, field string) (int64, error) {
	var info string
	var err error
	if section == "" {
		info, err = c.Info(ctx).Result()
	} else {
		info, err = c.Info(ctx, section).Result()
	}
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, field+":calls="); ok { // commandstats
			n, _, _ := strings.Cut(rest, ",")
			return strconv.ParseInt(n, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, nil // never counted
}

// renewal is what n session locks cost, per second, measured over d.
type renewal struct {
	renewed, rounds, evalsha float64 // locks renewed, renewal rounds, EVALSHA on one backend (baseline removed)
}

// sessionRenewal holds n session locks of ttl through the proxy at addr for
// d and counts the renewals: the proxy's own counters, and the scripts one
// backend ran beyond what it runs in the same time without them.
func sessionRenewal(addr, backend string, n int, ttl, d time.Duration) (renewal, error) {
	ctx := context.Background()
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer p.Close()
	b := redis.NewClient(&redis.Options{Addr: backend})
	defer b.Close()
	evalsha := func() (int64, error) { return infoField(ctx, b, "commandstats", "cmdstat_evalsha") }
	before, err := evalsha()
	if err != nil {
		return renewal{}, err
	}
	time.Sleep(d)
	after, err := evalsha()
	if err != nil {
		return renewal{}, err
	}
	idle := after - before

	const perConn = 100 // a session lock lives as long as its connection: a few hold them all
	var conns []*redis.Client
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range n {
		if i%perConn == 0 {
			conns = append(conns, redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1, ConnMaxIdleTime: -1}))
		}
		key := fmt.Sprintf("session:%d", i)
		if err := conns[len(conns)-1].Do(ctx, "LOCK.ACQUIRE", key, "bench", ttl.Milliseconds(), "SESSION").Err(); err != nil {
			return renewal{}, fmt.Errorf("LOCK.ACQUIRE %s SESSION: %w", key, err)
		}
	}
	time.Sleep(ttl) // every lock is in its renewal rhythm
	read := func() (renewed, rounds, scripts int64, err error) {
		if renewed, err = infoField(ctx, p, "", "session_renewed"); err != nil {
			return
		}
		if rounds, err = infoField(ctx, p, "", "session_renewal_rounds"); err != nil {
			return
		}
		scripts, err = evalsha()
		return
	}
	r0, n0, s0, err := read()
	if err != nil {
		return renewal{}, err
	}
	start := time.Now()
	time.Sleep(d)
	r1, n1, s1, err := read()
	if err != nil {
		return renewal{}, err
	}
	secs := time.Since(start).Seconds()
	if lost, _ := infoField(ctx, p, "", "session_lost"); lost > 0 {
		return renewal{}, fmt.Errorf("%d session locks lost during the bench", lost)
	}
	return renewal{renewed: float64(r1-r0) / secs, rounds: float64(n1-n0) / secs, evalsha: float64(s1-s0-idle) / secs}, nil
}

// handoffs measures, n times, the time from a LOCK.RELEASE's reply to the
// grant of the waiter queued behind it (LOCK.ACQUIRE ... WAIT), the two on
// different connections; it returns the p50 and p99 in ms.
func handoffs(addr string, backends []string, n int) (p50, p99 float64, err error) {
	ctx := context.Background()
	var bs []*redis.Client
	for _, a := range backends {
		b := redis.NewClient(&redis.Options{Addr: a})
		defer b.Close()
		bs = append(bs, b)
	}
	// queued: the waiter is in the key's queue on a majority of backends,
	// so it was refused and waits for the wake-up.
	queued := func(key string) bool {
		n := 0
		for _, b := range bs {
			if b.ZScore(ctx, quorum.QueueKey(key), "waiter").Err() == nil {
				n++
			}
		}
		return n > len(bs)/2
	}
	holder := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer holder.Close()
	waiter := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Minute})
	defer waiter.Close()
	var ms []float64
	for i := range n {
		key := fmt.Sprintf("handoff:%d", i)
		if err := holder.Do(ctx, "LOCK.ACQUIRE", key, "holder", 30000).Err(); err != nil {
			return 0, 0, err
		}
		granted := make(chan error, 1)
		go func() { granted <- waiter.Do(ctx, "LOCK.ACQUIRE", key, "waiter", 30000, "WAIT", 30000).Err() }()
		for deadline := time.Now().Add(10 * time.Second); !queued(key); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return 0, 0, fmt.Errorf("the waiter on %s was not queued within 10s", key)
			}
		}
		if err := holder.Do(ctx, "LOCK.RELEASE", key, "holder").Err(); err != nil {
			return 0, 0, err
		}
		released := time.Now()
		if err := <-granted; err != nil {
			return 0, 0, fmt.Errorf("waiter: %w", err)
		}
		ms = append(ms, float64(time.Since(released).Microseconds())/1000)
		if err := waiter.Do(ctx, "LOCK.RELEASE", key, "waiter").Err(); err != nil {
			return 0, 0, err
		}
	}
	slices.Sort(ms)
	return ms[len(ms)/2], ms[len(ms)*99/100], nil
}

// featureReport is the report's part on session renewals and hand-offs.
func featureReport(r renewal, locks int, p50, p99 float64, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Session locks: renewal traffic, %d locks of 3 s TTL (`LOCK.ACQUIRE ... SESSION`), proxy N=5, `session_tick` 500ms\n\n"+
		"| locks renewed/s | renewal rounds/s (all locks of the replica in one) | renewal scripts/s on one backend | the same with one round per lock |\n"+
		"|---|---|---|---|\n| %.0f | %.1f | %.1f | %.0f |\n", locks, r.renewed, r.rounds, r.evalsha, r.renewed)
	fmt.Fprintf(&b, "\nEach lock is renewed once a third of its TTL has passed (here about every 1 to 1.5 s); a renewal round sends\n"+
		"one script per 512 due locks to each backend, in one pipelined write. Scripts are counted as the backend's EVALSHA calls\n"+
		"beyond those it served in as long without the session locks (health checks).\n")
	fmt.Fprintf(&b, "\n## Fair waiting: hand-off from `LOCK.RELEASE` to the next waiter (`LOCK.ACQUIRE ... WAIT`), proxy N=5, %d hand-offs (ms)\n\n"+
		"| p50 | p99 | target (p50) | |\n|---|---|---|---|\n| %.3f | %.3f | < 2 ms | %s |\n", n, p50, p99, map[bool]string{true: "met", false: "**missed**"}[p50 < 2])
	b.WriteString("\nFrom the release's reply to the waiter's grant: the wake-up through the backends' pub/sub, then the waiter's\n" +
		"fenced acquire (one round where the backends' counters agree, else two) on every backend.\n")
	return b.String()
}
