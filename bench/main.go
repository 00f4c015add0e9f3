package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

func main() {
	runs := flag.Int("runs", 3, "times each case runs, interleaved; the table shows medians")
	requests := flag.Int("requests", 100000, "requests per redis-benchmark case")
	cycleTime := flag.Duration("cycle-time", 5*time.Second, "duration of each lock+unlock cycle case")
	idle := flag.Int("idle-conns", 10000, "idle client connections for the memory case")
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	quick := flag.Bool("quick", false, "small counts, for a smoke run")
	sessions := flag.Int("session-locks", 1000, "session locks held for the renewal case")
	handoffN := flag.Int("handoffs", 300, "release-to-waiter hand-offs measured")
	baseline := flag.String("baseline", "", "a git revision whose proxy is measured too (N=5, interleaved with this tree's), "+
		"to tell a regression from the machine's noise")
	only := flag.String("only", "", `run only this section, printed, not written to -out: "hostile" (one hostile tenant beside an honest one, issue 25) `+
		`, "floor" (against limitproxy, issue 27), "cost" (what a lock write costs one backend, issue 27) or "wake" (a Redisson waiter woken across replicas, issue 26)`)
	floorDir := flag.String("floor", "", "limitproxy's source folder (default: "+floorSrc+" in the nearest ancestor of the repository "+
		"or of its main checkout); \"off\" skips the floor rows")
	hostileWindow := flag.Duration("hostile-window", 4*time.Second, "how long the honest tenant runs in each hostile case")
	hostileMix := flag.Int("hostile-load", -1, "internal: run this hostile mix against -hostile-addr until stdin closes (the hostile section's child process)")
	hostileAddr := flag.String("hostile-addr", "", "internal: the proxy -hostile-load loads")
	redissonDir := flag.String("redisson", "", "a folder with Redisson 3.52.0 as ../shared/tools/java-clients.sh builds it "+
		"(redisson-3.52.0.jar, .classpath): the real client's contention rows (issue 26); without it they are left out")
	flag.Parse()
	if *hostileMix >= 0 {
		hostileLoad(*hostileMix, *hostileAddr)
		return
	}
	if *quick {
		*runs, *requests, *cycleTime, *idle, *handoffN = 1, 5000, time.Second, 500, 50
	}
	for _, tool := range []string{"redis-server", "redis-benchmark"} {
		if _, err := exec.LookPath(tool); err != nil {
			log.Fatalf("%s not found: install redis-server and redis-tools (bash .ci/run does)", tool)
		}
	}
	raiseFileLimit()
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	e := newEnv()
	defer e.close()
	if *only == "hostile" {
		fmt.Print(runHostile(e, root, *baseline, *hostileWindow))
		return
	}
	if *only == "wake" {
		fmt.Print(runWake(e, root, *handoffN))
		return
	}
	if *only == "cost" {
		m := measurements{}
		if err := backendCost(m, e.startBackends(1)[0], *runs, *requests); err != nil {
			e.close()
			log.Fatal(err)
		}
		fmt.Print(backendCostReport(m, *runs, *requests))
		return
	}
	if *only == "floor" {
		fmt.Print(runFloor(e, root, *floorDir, *baseline, *runs, *requests))
		return
	}
	check := func(err error) {
		if err != nil {
			e.close() // log.Fatal skips deferred calls: stop the servers first
			log.Fatal(err)
		}
	}

	servers := redistest.Start(e, 8) // 7 backends and one direct redis
	direct, backends := servers[7].Addr, redistest.Addrs(servers[:7])
	bin := e.buildProxy(root)
	proxies := map[int]*proxyProc{}
	for _, n := range []int{3, 5, 7} {
		proxies[n] = e.startProxy(bin, backends[:n])
	}
	var base *proxyProc
	if *baseline != "" {
		base = e.startProxy(e.buildProxyAt(root, *baseline), backends[:5])
	}
	second := e.startProxy(bin, backends[:5]) // N=5's other replica: clients contending through both

	rlock, err := loadRLockScripts(root)
	check(err)
	java, whyNoJava := newRedissonRunner(root, *redissonDir)
	m := measurements{}
	// A case whose redis-benchmark stopped at an error reply (NOQUORUM on
	// backend timeouts when the shared machine is loaded) runs again, up to
	// twice; a third failure ends the run.
	rbench := func(addr string, clients, p, n int, command ...string) rb {
		for try := 1; ; try++ {
			r, err := redisBenchmark(addr, clients, p, n, command...)
			if err == nil || try == 3 {
				check(err)
				return r
			}
			log.Printf("try %d of %s -P %d on %s: %.200s; again", try, command[0], p, addr, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	for run := 1; run <= *runs; run++ {
		log.Printf("run %d of %d", run, *runs)
		for _, wl := range []struct {
			name string
			cmd  []string
		}{{"set", setCommand}, {"unlock", unlockCommand}} {
			for _, p := range []int{1, 16} {
				targets := []struct{ name, addr string }{{"direct", direct}, {"n3", proxies[3].addr}, {"n5", proxies[5].addr}, {"n7", proxies[7].addr}}
				if base != nil { // right beside this tree's N=5, in alternating order: the same backends, the same moment
					pair := []struct{ name, addr string }{{"n5", proxies[5].addr}, {"base5", base.addr}}
					if run%2 == 0 {
						pair[0], pair[1] = pair[1], pair[0]
					}
					targets = append(targets[:2], append(pair, targets[3:]...)...)
				}
				for _, t := range targets {
					// Keys of this case's own: a case never meets the locks an earlier one left
					// (a SET NX that finds its key taken costs the backends less).
					r := rbench(t.addr, 50, p, *requests, ownKeys(wl.cmd, fmt.Sprintf("%s:%d:%d", t.name, p, run))...)
					m.add(fmt.Sprintf("%s/P%d/%s", wl.name, p, t.name), r.rps)
				}
			}
		}
		for _, p := range []int{1, 16} { // the fenced acquire, beside this run's SET NX PX on N=5
			r := rbench(proxies[5].addr, 50, p, *requests, ownKeys(fencedCommand, fmt.Sprintf("n5:%d:%d", p, run))...)
			m.add(fmt.Sprintf("fenced/P%d/n5", p), r.rps)
		}
		for _, t := range []struct{ name, addr string }{{"direct", direct}, {"n5", proxies[5].addr}} {
			r := rbench(t.addr, 1, 1, *requests/5, ownKeys(setCommand, fmt.Sprintf("%s:p50:%d", t.name, run))...)
			m.add("lat/p50/"+t.name, r.p50)
			m.add("lat/p99/"+t.name, r.p99)
		}
		if base != nil && run%2 == 0 {
			v, err := proxyCycles("baseline", base.addr, 50, *cycleTime)
			check(err)
			m.add("cycles/base", v)
		}
		v, err := proxyCycles("proxy", proxies[5].addr, 50, *cycleTime)
		check(err)
		m.add("cycles/proxy", v)
		if base != nil && run%2 == 1 {
			v, err := proxyCycles("baseline", base.addr, 50, *cycleTime)
			check(err)
			m.add("cycles/base", v)
		}
		v, err = redsyncCycles(backends[:5], 50, *cycleTime)
		check(err)
		m.add("cycles/redsync", v)
		rl := []struct{ name, addr string }{{"direct", direct}, {"n5", proxies[5].addr}}
		if base != nil { // beside this tree's, in alternating order
			rl = append(rl, struct{ name, addr string }{"base5", base.addr})
			if run%2 == 0 {
				rl[1], rl[2] = rl[2], rl[1]
			}
		}
		for _, t := range rl {
			v, err := rlockCycles(rlock, t.name, t.addr, 50, *cycleTime)
			check(err)
			m.add("rlock/"+t.name, v)
		}
		for i, t := range []struct {
			name  string
			addrs [2]string
		}{{"direct", [2]string{direct, direct}}, {"n5", [2]string{proxies[5].addr, second.addr}}} {
			if java == nil {
				break
			}
			if run%2 == 0 && i == 0 { // the other order every second run
				t.name, t.addrs = "n5", [2]string{proxies[5].addr, second.addr}
			} else if run%2 == 0 {
				t.name, t.addrs = "direct", [2]string{direct, direct}
			}
			rows, err := java.run(t.addrs, fmt.Sprint("bench:", t.name, ":", run))
			check(err)
			for row, v := range rows {
				m.add("redisson/"+row+"/"+t.name, v)
			}
		}
	}
	check(backendCost(m, direct, *runs, *requests))
	perConn, err := idleConnMemory(proxies[5], *idle)
	check(err)
	// Once, not per run: they measure the features' own costs.
	renew, err := sessionRenewal(proxies[5].addr, backends[0], *sessions, 3*time.Second, *cycleTime)
	check(err)
	p50, p99, err := handoffs(proxies[5].addr, backends[:5], *handoffN)
	check(err)
	m.add("handoff/p50", p50)
	m.add("handoff/p99", p99)

	report := m.report(*runs, *idle, perConn, *baseline) + redissonReport(m, whyNoJava) + runWake(e, root, *handoffN) + featureReport(renew, *sessions, m.median("handoff/p50"), m.median("handoff/p99"), *handoffN) +
		backendCostReport(m, *runs, *requests) +
		runFloor(e, root, *floorDir, *baseline, *runs, *requests) + runHostile(e, root, *baseline, *hostileWindow)
	fmt.Print(report)
	path := *out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	check(os.WriteFile(path, []byte(report), 0o644))
	log.Printf("wrote %s", *out)
}
