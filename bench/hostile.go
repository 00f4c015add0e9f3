package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hostile section (issue 25): the honest tenant search (8 clients, SET NX
// PX + compare-and-delete unlock) alone and beside each hostile mix of
// tenant billing, side by side in one run, on this tree's proxy and, with
// -baseline, on that revision's.

const hostileUsers = `users:
  - {name: billing, password: b-pass, prefix: "billing:"}
  - {name: search, password: s-pass, prefix: "search:"}
`

// honestResult is what the honest tenant got over one window.
type honestResult struct {
	p50, p99 time.Duration
	perSec   float64
	errs     int64 // errors other than a refused SET (NOQUORUM...)
}

// meanWith is the mean of two windows' results (their errors summed).
func (h honestResult) meanWith(o honestResult) honestResult {
	return honestResult{p50: (h.p50 + o.p50) / 2, p99: (h.p99 + o.p99) / 2, perSec: (h.perSec + o.perSec) / 2, errs: h.errs + o.errs}
}

// honest runs 8 search clients for d: SET NX PX then compare-and-delete.
func honest(addr string, d time.Duration) honestResult {
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	var errs, ops atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := range 8 {
		c := redis.NewClient(&redis.Options{Addr: addr, Username: "search", Password: "s-pass", PoolSize: 1, MaxRetries: -1, ReadTimeout: 30 * time.Second})
		wg.Go(func() {
			defer c.Close()
			var mine []time.Duration
			for i := 0; time.Now().Before(end); i++ {
				key := fmt.Sprintf("search:lock:%d:%d", w, i%64)
				s := time.Now()
				err := c.SetNX(ctx, key, "v", 10*time.Second).Err()
				mine = append(mine, time.Since(s))
				if err != nil {
					errs.Add(1)
					continue
				}
				s = time.Now()
				err = c.Eval(ctx, unlockScript, []string{key}, "v").Err()
				mine = append(mine, time.Since(s))
				if err != nil {
					errs.Add(1)
				}
				ops.Add(2)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	r := honestResult{perSec: float64(ops.Load()) / d.Seconds(), errs: errs.Load()}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// cpuTicks is a process's user+system CPU time in clock ticks (1/100 s).
func cpuTicks(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	k, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + k
}

// runHostile measures the table on each named proxy and returns the report.
func runHostile(e *env, root, baseline string, d time.Duration) string {
	servers := e.startBackends(3)
	cfg := filepath.Join(e.dir, "hostile.yaml")
	if err := os.WriteFile(cfg, []byte(hostileUsers), 0o600); err != nil {
		e.Fatalf("%v", err)
	}
	type target struct {
		name string
		p    *proxyProc
	}
	targets := []target{{"this tree", e.startProxyWith(e.buildProxy(root), servers, "-config", cfg)}}
	if baseline != "" {
		targets = append(targets, target{baseline, e.startProxyWith(e.buildProxyAt(root, baseline), servers, "-config", cfg)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## One hostile tenant beside an honest one (issue 25)\n\n%s; load average at start: %s\n\n", machine(), loadAvg())
	fmt.Fprintf(&b, "Honest tenant search: 8 clients, SET NX PX + compare-and-delete unlock, %v per window; 3 backends.\n", d)
	fmt.Fprintf(&b, "Each mix: the honest tenant alone, then beside the mix, then alone again once the mix's load has gone, right after each other on one proxy, then the same on the next proxy: \"alone\" is the mean of the windows before and after, so that a machine whose speed drifts during the three windows does not lean the ratio either way. ")
	fmt.Fprintf(&b, "Ratios: beside / alone (throughput: alone / beside). CPU: the proxy's, in the second after the hostile load stopped.\n\n")
	fmt.Fprintf(&b, "| proxy | hostile mix (billing) | alone p50 / p99 / ops/s | beside p50 / p99 / ops/s | p50 x | p99 x | throughput ÷ | honest errors | CPU after stop | hostile set-up |\n|---|---|---|---|---|---|---|---|---|---|\n")
	rows := make([][]string, len(targets))
	us := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	for i, mix := range hostileMixes {
		for ti, t := range targets {
			first := honest(t.p.addr, d)
			stop := startHostileProcess(e, i, t.p.addr)
			time.Sleep(time.Second)
			r := honest(t.p.addr, d)
			setup := stop()
			time.Sleep(time.Second)
			before := cpuTicks(t.p.cmd.Process.Pid)
			time.Sleep(time.Second)
			cpu := cpuTicks(t.p.cmd.Process.Pid) - before
			time.Sleep(3 * time.Second) // the hostile's session locks and waiters go
			alone := first.meanWith(honest(t.p.addr, d))
			rows[ti] = append(rows[ti], fmt.Sprintf("| %s | %s | %v / %v / %.0f | %v / %v / %.0f | %.1f | %.1f | %.1f | %d | %d%% | %s |\n", t.name, mix.name,
				us(alone.p50), us(alone.p99), alone.perSec, us(r.p50), us(r.p99), r.perSec,
				float64(r.p50)/float64(alone.p50), float64(r.p99)/float64(alone.p99), alone.perSec/max(r.perSec, 1), r.errs+alone.errs, cpu, setup))
		}
	}
	for _, rs := range rows {
		b.WriteString(strings.Join(rs, ""))
	}
	return b.String()
}

func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(data))[:3], " ")
}
