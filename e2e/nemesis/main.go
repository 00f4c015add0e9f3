// Command nemesis runs a seeded, randomized schedule of faults against real
// redis-servers and proxy replicas while many clients of every kind (plain
// SET NX PX, Redisson's hash lock scripts, native LOCK.* with WAIT and
// SESSION) take a few contended keys; every client operation goes into a
// history (internal/history), which a checker reads whole at the end.
//
//	go run ./e2e/nemesis -seed 7 -for 10m [-replicas 2] [-backends 5] [-clients 12] [-proxy-bin PATH] [-hostile]
//
// It prints the seed, the faults with their times, per-kind per-outcome
// counts and the verdict, writes the history as JSON lines to a file it
// names, and exits 1 on any anomaly (2 when the run could not be set up).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var o options
	flag.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()%1e6), "the schedule's seed (math/rand/v2 PCG)")
	flag.DurationVar(&o.dur, "for", time.Minute, "how long clients run under faults")
	flag.IntVar(&o.replicas, "replicas", 2, "proxy replicas (processes)")
	flag.IntVar(&o.backends, "backends", 5, "redis-servers")
	flag.IntVar(&o.clients, "clients", 12, "clients, spread over the kinds (plain, redisson, native)")
	flag.IntVar(&o.keys, "keys", 4, "lock keys the clients contend for")
	flag.StringVar(&o.bin, "proxy-bin", "", "the proxy binary to test (default: go build this checkout)")
	flag.BoolVar(&o.hostile, "hostile", false, "also send commands aimed at the proxy's bookkeeping keys (__redlock:*)")
	flag.StringVar(&o.out, "out", "", "where to write the history (default: a new file in the temp dir)")
	flag.Parse()
	res, err := run(o, func(format string, args ...any) { fmt.Printf(format+"\n", args...) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		os.Exit(2)
	}
	if len(res.verdict.Anomalies) > 0 || res.hostileAccepted > 0 {
		os.Exit(1)
	}
}
