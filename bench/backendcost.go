package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The backend's cost of one lock write, taken apart (issue 27): on this
// machine the backends spend more CPU per SET NX PX round than the proxy
// does (the floor section), so what a script call costs a redis-server,
// and why, decides how far the proxy can go. Each case runs on the direct
// redis-server, 50 clients pipelining 16 deep, its CPU (INFO) divided by
// the calls; the scripts are stand-ins that isolate one cost each.
var backendCases = []struct{ name, label, script string }{
	{"set", "plain `SET k v NX PX 30000` (the floor's call to each backend)", ""},
	{"noop0", "a script call doing nothing (`return 1`), no keys or arguments", "return 1"},
	{"noop8", "the same with the acquire's 3 keys and 5 arguments", "return 1"},
	{"set8", "a script doing the `SET NX PX`, 3 keys and 5 arguments", "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"},
	{"note8", "the same and a note key beside the lock (the proxy's layout: round and padding)",
		"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then redis.call('SET', KEYS[2], ARGV[3] .. ' ' .. ARGV[4], 'PX', ARGV[2]) return 1 end return 0"},
	{"value8", "the same with the note in the lock's value instead",
		"if redis.call('SET', KEYS[1], ARGV[3] .. ' ' .. ARGV[4] .. '\\n' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"},
}

// backendCost measures each case runs times, interleaved, into m.
func backendCost(m measurements, addr string, runs, requests int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	ctx := context.Background()
	for run := 0; run < runs; run++ {
		for _, bc := range backendCases {
			cmd := []string{"SET", "cost:__rand_int__", "v", "NX", "PX", "30000"}
			if bc.script != "" {
				sha, err := c.ScriptLoad(ctx, bc.script).Result()
				if err != nil {
					return err
				}
				cmd = []string{"EVALSHA", sha, "0"}
				if bc.name != "noop0" {
					cmd = []string{"EVALSHA", sha, "3", "cost:__rand_int__", "m:__rand_int__", "q:__rand_int__", "v", "30000", "r1", "5", "0"}
				}
			}
			if err := c.FlushAll(ctx).Err(); err != nil {
				return err
			}
			before := backendCPU([]string{addr})
			if _, err := redisBenchmark(addr, 50, 16, requests, cmd...); err != nil {
				return err
			}
			m.add("cost/"+bc.name, (backendCPU([]string{addr})-before)/float64(requests))
		}
	}
	return nil
}

func backendCostReport(m measurements, runs, requests int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## What a lock write costs one backend (issue 27)\n\n"+
		"One redis-server, 50 clients, `-P 16`, %d calls per case, median of %d interleaved runs: the server's CPU (INFO `used_cpu_user` + "+
		"`used_cpu_sys`) per call, its reading and replying included. The scripts are stand-ins, each adding one cost of the proxy's "+
		"acquire script (`backend/scripts/acquire.lua`: the queue check, the lock, its note; the note outlives the lock only with a lock-delay).\n\n"+
		"| call | µs per call | / plain `SET` |\n|---|---|---|\n", requests, runs)
	set := m.median("cost/set")
	for _, bc := range backendCases {
		v := m.median("cost/" + bc.name)
		fmt.Fprintf(&b, "| %s | %.2f | %.2fx |\n", bc.label, v, v/set)
	}
	return b.String()
}
