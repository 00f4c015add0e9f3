package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

func main() {
	var o options
	flag.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()%1e6), "the schedule's seed (math/rand/v2 PCG)")
	flag.DurationVar(&o.dur, "for", time.Minute, "how long clients run under faults")
	flag.IntVar(&o.replicas, "replicas", 2, "proxy replicas (processes)")
	flag.IntVar(&o.backends, "backends", 5, "redis-servers")
	flag.IntVar(&o.clients, "clients", 12, "clients, spread over the kinds (plain, redisson, native, rwlock)")
	flag.IntVar(&o.keys, "keys", 4, "lock keys the clients contend for")
	flag.StringVar(&o.bin, "proxy-bin", "", "the proxy binary to test (default: go build this checkout)")
	flag.BoolVar(&o.hostile, "hostile", false, "also send commands aimed at the proxy's bookkeeping keys (__redlock:*)")
	flag.StringVar(&o.out, "out", "", "the directory to write the history to (default: the run's new temp dir)")
	checkFile := flag.String("check", "", "only check a history written before (JSON lines) and exit")
	flag.Parse()
	if *checkFile != "" {
		os.Exit(recheck(*checkFile))
	}
	res, err := run(o, func(format string, args ...any) { fmt.Printf(format+"\n", args...) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		os.Exit(2)
	}
	if len(res.verdict.Anomalies) > 0 || res.hostileAccepted > 0 {
		os.Exit(1)
	}
}

// recheck reads a history a run wrote and prints the checker's verdict.
func recheck(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	defer f.Close()
	ops, err := history.Read(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	v := checkHistory(ops)
	fmt.Printf("%s; %d late OK answers (allowed)\n", v.Verdict(), late(ops))
	for _, a := range v.Anomalies {
		fmt.Println("  " + a.String())
	}
	if len(v.Anomalies) > 0 {
		return 1
	}
	return 0
}
