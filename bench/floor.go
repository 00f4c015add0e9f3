package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The floor section (issue 27): SET NX PX through limitproxy, a bare redcon
// fan-out over 5 redis-servers of its own (the cost floor of the
// architecture), beside this tree's proxy N=5 and the -baseline's, in the
// same runs; LOCK.ACQUIRE beside SET NX PX; p50 at one client; and the
// proxy's own CPU per SET NX PX round at -P 16.

// floorSrc is limitproxy's folder relative to an ancestor of the repository.
const floorSrc = "shared/tools/limitproxy"

// findFloor returns limitproxy's source folder: the first ancestor of the
// module root, or of the main checkout when root is a linked worktree,
// holding shared/tools/limitproxy. "" when there is none.
func findFloor(root string) string {
	starts := []string{root}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--path-format=absolute", "--git-common-dir").Output(); err == nil {
		starts = append(starts, filepath.Dir(strings.TrimSpace(string(out)))) // the main checkout
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, floorSrc, "main.go")); err == nil {
				return filepath.Join(d, floorSrc)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return ""
}

// buildFloor compiles limitproxy from a copy of its source in the env's
// temporary folder (with its own go.mod), leaving src untouched.
func (e *env) buildFloor(src string) (string, error) {
	tmp, bin := filepath.Join(e.dir, "limitproxy-src"), filepath.Join(e.dir, "limitproxy")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"main.go", "go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil && f != "go.sum" {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Stderr = tmp, os.Stderr
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", src, err)
	}
	return bin, nil
}

// floorTarget is one server the section measures, by its name in the
// measurements, and the redis-servers behind it.
type floorTarget struct {
	name     string
	p        *proxyProc
	backends []string
}

// backendCPU is the CPU time the redis-servers at addrs used so far, in
// µs (INFO cpu: used_cpu_user + used_cpu_sys); NaN when one cannot say.
func backendCPU(addrs []string) float64 {
	total := 0.0
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, Protocol: 2})
		info, err := c.Info(context.Background(), "cpu").Result()
		_ = c.Close()
		if err != nil {
			return math.NaN()
		}
		for _, line := range strings.Split(info, "\r\n") {
			k, v, _ := strings.Cut(line, ":")
			if k == "used_cpu_user" || k == "used_cpu_sys" {
				f, _ := strconv.ParseFloat(v, 64)
				total += f * 1e6
			}
		}
	}
	return total
}

// startFloorTargets starts the section's servers: limitproxy over 5
// redis-servers of its own (skipped, with the reason, when it cannot be
// found or built), this tree's proxy and the baseline's over 5 others.
func startFloorTargets(e *env, root, floorDir, baseline string) (floor *proxyProc, proxy, base *proxyProc, backends, floorBackends []string, skipped string) {
	backends = e.startBackends(5)
	proxy = e.startProxy(e.buildProxy(root), backends)
	if baseline != "" {
		base = e.startProxy(e.buildProxyAt(root, baseline), backends)
	}
	if floorDir == "" {
		floorDir = findFloor(root)
	}
	if floorDir == "off" || floorDir == "" {
		return nil, proxy, base, backends, nil, "limitproxy not found: no " + floorSrc + " above " + root + " (set -floor)"
	}
	bin, err := e.buildFloor(floorDir)
	if err != nil {
		return nil, proxy, base, backends, nil, err.Error()
	}
	floorBackends = e.startBackends(5)
	floor = e.startServer(bin, "limitproxy", "-backends", strings.Join(floorBackends, ","))
	return floor, proxy, base, backends, floorBackends, ""
}

// measureFloor runs the section's cases once, in an order rotated by run,
// into m under "floor/...".
func measureFloor(m measurements, run, requests int, floor, proxy, base *proxyProc, backends, floorBackends []string) (failures []string) {
	// A case whose redis-benchmark stopped at an error reply (NOQUORUM on
	// backend timeouts when the shared machine is loaded) runs again, up
	// to twice, then has no sample in this run; the report lists each failure.
	tries := 0 // of the last case
	bench := func(addr string, clients, p, n int, command ...string) (rb, error) {
		for tries = 1; ; tries++ {
			r, err := redisBenchmark(addr, clients, p, n, command...)
			if err == nil {
				return r, nil
			}
			msg := err.Error()
			if i := strings.Index(msg, "Error from server"); i >= 0 {
				msg = msg[i:]
			}
			failures = append(failures, fmt.Sprintf("run %d, try %d, %s `-P %d` c=%d on %s: %.160s", run, tries, command[0], p, clients, addr, strings.ReplaceAll(msg, "\n", " ")))
			log.Printf("%s", failures[len(failures)-1])
			if tries == 3 {
				return r, err // this run has no sample of the case
			}
		}
	}
	targets := []floorTarget{{"n5", proxy, backends}}
	if floor != nil {
		targets = append(targets, floorTarget{"floor", floor, floorBackends})
	}
	if base != nil {
		targets = append(targets, floorTarget{"base5", base, backends})
	}
	for i := 0; i < run%len(targets); i++ { // the same moment for each, in turn first
		targets = append(targets[1:], targets[0])
	}
	for _, p := range []int{1, 16} {
		for _, t := range targets {
			before, bBefore := cpuTicks(t.p.cmd.Process.Pid), backendCPU(t.backends)
			r, err := bench(t.p.addr, 50, p, requests, ownKeys(setCommand, fmt.Sprintf("floor:%s:%d:%d", t.name, p, run))...)
			if err != nil {
				continue
			}
			ticks, bUsed := cpuTicks(t.p.cmd.Process.Pid)-before, backendCPU(t.backends)-bBefore
			m.add(fmt.Sprintf("floor/set/P%d/%s", p, t.name), r.rps)
			if tries == 1 { // a failed try sent an unknown number of requests
				m.add(fmt.Sprintf("floor/cpu/P%d/%s", p, t.name), float64(ticks)*1e4/float64(requests)) // 1 tick = 10 ms = 1e4 µs
				if !math.IsNaN(bUsed) {
					m.add(fmt.Sprintf("floor/bcpu/P%d/%s", p, t.name), bUsed/float64(requests))
				}
			}
		}
		for _, t := range targets {
			if t.name == "floor" {
				continue // no LOCK.ACQUIRE there
			}
			if r, err := bench(t.p.addr, 50, p, requests, ownKeys(fencedCommand, fmt.Sprintf("%s:%d:%d", t.name, p, run))...); err == nil {
				m.add(fmt.Sprintf("floor/fenced/P%d/%s", p, t.name), r.rps)
			}
		}
	}
	for _, t := range targets {
		if r, err := bench(t.p.addr, 1, 1, requests/5, ownKeys(setCommand, fmt.Sprintf("floor:%s:p50:%d", t.name, run))...); err == nil {
			m.add("floor/p50/"+t.name, r.p50)
		}
	}
	return failures
}

// floorReport is the section's table, from the medians in m.
func floorReport(m measurements, runs, requests int, baseline, skipped string, failures []string) string {
	var b strings.Builder
	md := func(name string) float64 { // NaN: every try of the case failed (listed below)
		if len(m[name]) == 0 {
			return math.NaN()
		}
		return m.median(name)
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	fmt.Fprintf(&b, "\n## Against the floor (issue 27): limitproxy over 5 other redis-servers, proxy N=5\n\n")
	fmt.Fprintf(&b, "Medians of %d runs, the servers measured in turn within each run. `SET lock:__rand_int__ v NX PX 30000`, 50 clients, "+
		"%d requests; p50 at one client over %d requests; CPU: the process's utime+stime (/proc, 10 ms ticks) over the `-P 16` case, "+
		"divided by its requests; the backends' CPU: their INFO `used_cpu_user` + `used_cpu_sys` over the same case. On this machine "+
		"the backends share the cores with the proxy and the load generator, so the floor's lead in requests/s follows the CPU a "+
		"round costs in all of them together: a plain `SET` per backend for the floor, a script per backend for the proxy "+
		"(its notes, lock-delay and queue check).\n\n", runs, requests, requests/5)
	hasFloor, hasBase := skipped == "", baseline != ""
	if !hasFloor {
		fmt.Fprintf(&b, "Floor rows skipped: %s.\n\n", skipped)
	}
	head, rule := "| | proxy N=5 |", "|---|---|"
	if hasFloor {
		head, rule = head+" floor | proxy / floor | target | |", rule+"---|---|---|---|"
	}
	if hasBase {
		head, rule = head+fmt.Sprintf(" %s | proxy / %s |", baseline, baseline), rule+"---|---|"
	}
	b.WriteString(head + "\n" + rule + "\n")
	row := func(label, key, format, target string, ok func(float64) bool) {
		fmt.Fprintf(&b, "| %s | "+format+" |", label, md(key+"/n5"))
		if hasFloor {
			ratio := md(key+"/n5") / md(key+"/floor")
			mark := ""
			if target != "" {
				mark = verdict(ok(ratio))
			}
			fmt.Fprintf(&b, " "+format+" | %.2fx | %s | %s |", md(key+"/floor"), ratio, target, mark)
		}
		if hasBase {
			fmt.Fprintf(&b, " "+format+" | %.2fx |", md(key+"/base5"), md(key+"/n5")/md(key+"/base5"))
		}
		b.WriteString("\n")
	}
	row("`SET NX PX`, `-P 1` (requests/s)", "floor/set/P1", "%.0f", ">= 1.0x", func(r float64) bool { return r >= 1 })
	row("`SET NX PX`, `-P 16` (requests/s)", "floor/set/P16", "%.0f", ">= 1.0x", func(r float64) bool { return r >= 1 })
	row("p50 at one client (ms)", "floor/p50", "%.3f", "<= 1.1x", func(r float64) bool { return r <= 1.1 })
	row("CPU per `SET NX PX` round, `-P 16` (µs; target: at most half the baseline's)", "floor/cpu/P16", "%.1f", "", nil)
	row("its 5 backends' CPU per `SET NX PX` round, `-P 16` (µs)", "floor/bcpu/P16", "%.1f", "", nil)
	head, rule = "\n| `LOCK.ACQUIRE fenced:__rand_int__ v 30000` through the proxy N=5 | requests/s | `SET NX PX` | ratio | target | |", "|---|---|---|---|---|---|"
	if hasBase {
		head, rule = head+fmt.Sprintf(" %s | `SET NX PX` | ratio | this tree / %s |", baseline, baseline), rule+"---|---|---|---|"
	}
	b.WriteString(head + "\n" + rule + "\n")
	for _, p := range []int{1, 16} {
		fenced, set := md(fmt.Sprintf("floor/fenced/P%d/n5", p)), md(fmt.Sprintf("floor/set/P%d/n5", p))
		fmt.Fprintf(&b, "| `-P %d` | %.0f | %.0f | %.2fx | >= 0.7x | %s |", p, fenced, set, fenced/set, verdict(fenced/set >= 0.7))
		if hasBase {
			bf, bs := md(fmt.Sprintf("floor/fenced/P%d/base5", p)), md(fmt.Sprintf("floor/set/P%d/base5", p))
			fmt.Fprintf(&b, " %.0f | %.0f | %.2fx | %.2fx |", bf, bs, bf/bs, fenced/bf)
		}
		b.WriteString("\n")
	}
	if len(failures) > 0 {
		fmt.Fprintf(&b, "\nredis-benchmark stopped at an error reply (%d times; a case runs again up to twice, then has no sample in that run):\n\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}

// runFloor starts the section's servers, measures runs times and returns
// the report.
func runFloor(e *env, root, floorDir, baseline string, runs, requests int) string {
	floor, proxy, base, backends, floorBackends, skipped := startFloorTargets(e, root, floorDir, baseline)
	if skipped != "" {
		log.Printf("floor rows skipped: %s", skipped)
	}
	m := measurements{}
	var failures []string
	for run := 1; run <= runs; run++ {
		log.Printf("floor section: run %d of %d", run, runs)
		failures = append(failures, measureFloor(m, run, requests, floor, proxy, base, backends, floorBackends)...)
	}
	return floorReport(m, runs, requests, baseline, skipped, failures)
}
