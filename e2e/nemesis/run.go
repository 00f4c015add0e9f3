package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

type options struct {
	seed                              uint64
	dur                               time.Duration
	replicas, backends, clients, keys int
	bin, out                          string
	hostile                           bool
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

type result struct {
	faults          []*fault
	ops             []history.Op
	verdict         history.Result
	counts          map[string]map[history.Outcome]int
	hostileSent     int64
	hostileAccepted int64
	path            string
}

// run sets up the cluster, runs clients and faults for o.dur, then checks.
func run(o options, logf func(string, ...any)) (*result, error) {
	if o.backends < 3 || o.replicas < 1 || o.clients < len(clientKinds) || o.keys < 1 {
		return nil, fmt.Errorf("need -backends >= 3, -replicas >= 1, -clients >= %d, -keys >= 1", len(clientKinds))
	}
	redis.SetLogger(quiet{}) // a paused or restarting replica makes the pool log every failed dial
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("nemesis-%d-", o.seed))
	if err != nil {
		return nil, err
	}
	logf("nemesis: seed %d, %v, %d backends, %d replicas, %d clients, %d keys, hostile %v; logs in %s",
		o.seed, o.dur, o.backends, o.replicas, o.clients, o.keys, o.hostile, dir)
	bin := o.bin
	if bin == "" {
		if bin, err = buildProxy(root, dir); err != nil {
			return nil, err
		}
		defer os.Remove(bin) // tens of MB; the logs and the history stay
	}
	scr, err := loadScripts(root)
	if err != nil {
		return nil, err
	}
	cl, err := startCluster(dir, bin, o.backends, o.replicas, logf)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupted)

	rng := rand.New(rand.NewPCG(o.seed, 0x6e656d65))
	kinds := allKinds
	if !cl.skew {
		kinds = kinds[:len(kinds)-1] // ClockSkew is last
	}
	faults := plan(rng, kinds, o.dur, o.backends, o.replicas, quarantine)
	w := &world{rec: history.NewRecorder(), scripts: scr, delay: cl.delay, libDelay: cl.libDelay, stop: make(chan struct{})}
	for _, r := range cl.replicas {
		w.addrs = append(w.addrs, r.addr)
	}
	for i := range o.keys {
		w.keys = append(w.keys, fmt.Sprintf("{nem%d}", i))
		w.hashKeys = append(w.hashKeys, fmt.Sprintf("{rnem%d}", i))
		w.rwKeys = append(w.rwKeys, fmt.Sprintf("{rwnem%d}", i))
	}
	res := &result{faults: faults}
	var wg sync.WaitGroup
	for i := range o.clients {
		c := newClient(w, clientKinds[i%len(clientKinds)], i, o.seed)
		wg.Add(1)
		go func() { defer wg.Done(); c.run() }()
	}
	var sent, accepted atomic.Int64
	if o.hostile {
		wg.Add(1)
		go func() { defer wg.Done(); hostile(w, &sent, &accepted) }()
	}
	start := time.Now()
	stopFaults := make(chan struct{})
	injected := make(chan struct{})
	go func() { cl.inject(start, faults, stopFaults); close(injected) }()
	select {
	case <-time.After(o.dur):
	case <-interrupted:
		logf("nemesis: interrupted; stopping and checking what ran")
		close(stopFaults)
	}
	<-injected // every fault healed: paused processes continued, links whole
	close(w.stop)
	wg.Wait()
	res.ops = w.rec.Ops()
	res.hostileSent, res.hostileAccepted = sent.Load(), accepted.Load()
	res.verdict = checkHistory(res.ops)
	res.counts = counts(res.ops)
	if o.out == "" {
		o.out = dir
	}
	if res.path, err = history.Save(o.out, fmt.Sprintf("history-seed%d", o.seed), res.ops, res.verdict); err != nil {
		return nil, err
	}
	report(o, res, logf)
	return res, nil
}

// counts are per client kind and op kind, per outcome.
func counts(ops []history.Op) map[string]map[history.Outcome]int {
	out := map[string]map[history.Outcome]int{}
	for _, op := range ops {
		kind := strings.TrimRight(op.Client, "0123456789") + " " + string(op.Kind)
		if out[kind] == nil {
			out[kind] = map[history.Outcome]int{}
		}
		out[kind][op.Outcome]++
	}
	return out
}

func report(o options, res *result, logf func(string, ...any)) {
	logf("seed %d: %d faults", o.seed, len(res.faults))
	for _, f := range res.faults {
		logf("  %s", f)
	}
	kinds := make([]string, 0, len(res.counts))
	for k := range res.counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	logf("operations: %d", len(res.ops))
	for _, k := range kinds {
		c := res.counts[k]
		logf("  %-18s ok %6d  taken %6d  not_held %6d  unknown %6d", k, c[history.OK], c[history.Taken], c[history.NotHeld], c[history.Unknown])
	}
	if o.hostile {
		logf("hostile commands: %d sent, %d accepted (each must be refused)", res.hostileSent, res.hostileAccepted)
	}
	logf("late OK answers (after their window, allowed): %d", late(res.ops))
	logf("verdict: %s", res.verdict.Verdict())
	if n := len(res.verdict.Anomalies); n > 0 {
		for i, a := range res.verdict.Anomalies {
			if i == 50 {
				logf("  ... %d more", n-50)
				break
			}
			logf("  %s", a)
		}
	}
	logf("history (JSON lines; beside it the checker's HTML timeline): %s", res.path)
}
