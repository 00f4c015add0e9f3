package main

import (
	"fmt"
	"log"
	"slices"
	"strings"
	"time"
)

// measurements keeps every run's value per case.
type measurements map[string][]float64

func (m measurements) add(name string, v float64) { m[name] = append(m[name], v) }

func (m measurements) median(name string) float64 {
	vs := slices.Clone(m[name])
	if len(vs) == 0 {
		log.Fatalf("no measurement %q", name)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

func (m measurements) report(runs, idle int, perConn float64, baseline string) string {
	var b strings.Builder
	md := m.median
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	command := "go run ./bench"
	if baseline != "" {
		command += " -baseline " + baseline
	}
	fmt.Fprintf(&b, "# Benchmarks\n\nRegenerate with `%s` (about 5 minutes). Machine: %s. Taken %s.\n\n",
		command, machine(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Medians of %d interleaved runs. Backends are real redis-servers on loopback, sharing the machine's cores with the\n"+
		"proxy and the load generator; the machine is shared and noisy, so read the ratios (taken within one run), not the absolutes.\n"+
		"The proxies run with restart quarantine off, since their backends have just started.\n\n", runs)

	b.WriteString("## redis-benchmark, 50 clients, `-r 1000000` (requests/s)\n\n")
	b.WriteString("| workload | direct redis | proxy N=3 | proxy N=5 | proxy N=7 | N=5 / direct | target | |\n|---|---|---|---|---|---|---|---|\n")
	for _, wl := range []struct{ key, label string }{{"set", "`SET lock:__rand_int__ v NX PX 30000`"}, {"unlock", "canonical unlock, `EVAL` (keys mostly absent: answers 0)"}} {
		for _, p := range []int{1, 16} {
			k := fmt.Sprintf("%s/P%d/", wl.key, p)
			ratio := md(k+"n5") / md(k+"direct")
			target, ok := "", true
			if wl.key == "set" && p == 1 {
				target, ok = ">= 1.0x", ratio >= 1.0
			} else if wl.key == "set" {
				target, ok = ">= 0.4x", ratio >= 0.4
			}
			mark := ""
			if target != "" {
				mark = verdict(ok)
			}
			fmt.Fprintf(&b, "| %s, `-P %d` | %.0f | %.0f | %.0f | %.0f | %.2fx | %s | %s |\n",
				wl.label, p, md(k+"direct"), md(k+"n3"), md(k+"n5"), md(k+"n7"), ratio, target, mark)
		}
	}
	b.WriteString("\n## Fencing tokens: `LOCK.ACQUIRE` beside `SET NX PX`, proxy N=5, 50 clients (requests/s)\n\n" +
		"| `-P` | `SET k v NX PX 30000` | `LOCK.ACQUIRE k v 30000` (token: one round where the holders' counters agree) | ratio |\n|---|---|---|---|\n")
	for _, p := range []int{1, 16} {
		set, fenced := md(fmt.Sprintf("set/P%d/n5", p)), md(fmt.Sprintf("fenced/P%d/n5", p))
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.2fx |\n", p, set, fenced, fenced/set)
	}
	cyc := md("cycles/proxy") / md("cycles/redsync")
	fmt.Fprintf(&b, "\n## Lock+unlock cycles, 50 goroutines, one key each (cycles/s)\n\n"+
		"| go-redis through the proxy (N=5) | redsync v4 directly on the same 5 backends | ratio | target | |\n|---|---|---|---|---|\n"+
		"| %.0f | %.0f | %.2fx | >= 2x | %s |\n", md("cycles/proxy"), md("cycles/redsync"), cyc, verdict(cyc >= 2))
	fmt.Fprintf(&b, "\n## Redisson RLock lock+unlock cycles, 50 goroutines, one lock each (cycles/s)\n\n"+
		"Redisson 3.52's lock and unlock scripts as its recorded transcript carries them, sent by go-redis (EVALSHA), then the DEL of the unlock's latch that Redisson 3.24+ sends and waits for.\n\n"+
		"| direct redis | proxy N=5 | ratio |\n|---|---|---|\n| %.0f | %.0f | %.2fx |\n", md("rlock/direct"), md("rlock/n5"), md("rlock/n5")/md("rlock/direct"))
	lat := md("lat/p50/n5") / md("lat/p50/direct")
	fmt.Fprintf(&b, "\n## Latency at one client, `SET NX PX` (ms)\n\n"+
		"| | p50 | p99 |\n|---|---|---|\n| direct redis | %.3f | %.3f |\n| proxy N=5 | %.3f | %.3f |\n"+
		"| ratio | %.2fx (target <= 2x: %s) | %.2fx |\n", md("lat/p50/direct"), md("lat/p99/direct"), md("lat/p50/n5"), md("lat/p99/n5"),
		lat, verdict(lat <= 2), md("lat/p99/n5")/md("lat/p99/direct"))
	fmt.Fprintf(&b, "\n## Memory\n\n| proxy RSS growth per idle client connection (%d connections, N=5) | target | |\n|---|---|---|\n| %.1f KiB | < 10 KiB | %s |\n",
		idle, perConn/1024, verdict(perConn < 10*1024))
	if baseline != "" {
		fmt.Fprintf(&b, "\n## This tree against %s (`-baseline`), N=5, in the same runs\n\n"+
			"| workload | this tree | %s | ratio |\n|---|---|---|---|\n", baseline, baseline)
		for _, k := range []string{"set/P1", "set/P16", "unlock/P1", "unlock/P16"} {
			fmt.Fprintf(&b, "| redis-benchmark `%s` (requests/s) | %.0f | %.0f | %.2fx |\n", k, md(k+"/n5"), md(k+"/base5"), md(k+"/n5")/md(k+"/base5"))
		}
		fmt.Fprintf(&b, "| lock+unlock cycles/s | %.0f | %.0f | %.2fx |\n", md("cycles/proxy"), md("cycles/base"), md("cycles/proxy")/md("cycles/base"))
		fmt.Fprintf(&b, "| Redisson RLock lock+unlock cycles/s | %.0f | %.0f | %.2fx |\n", md("rlock/n5"), md("rlock/base5"), md("rlock/n5")/md("rlock/base5"))
	}
	return b.String()
}
