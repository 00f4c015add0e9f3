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
	{"acquire", "the acquire's calls for a `SET NX PX`: the queue check, the lock, its expiry time, the note set from it", costPrelude + costAcquire +
		"return acquire(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])"},
	{"acquire16", "the same, 16 acquires coalesced into one script call (per acquire; each in its own `pcall`)", costPrelude + costAcquire +
		"local out = {} for i = 0, #KEYS / 3 - 1 do local ok, r = pcall(acquire, KEYS[3*i+1], KEYS[3*i+2], KEYS[3*i+3], " +
		"ARGV[5*i+1], ARGV[5*i+2], ARGV[5*i+3], ARGV[5*i+4], ARGV[5*i+5]) if ok then out[i+1] = r else out[i+1] = redis.error_reply(tostring(r)) end end return out"},
}

// coalesced is how many acquires the coalesced case puts into one call.
const coalesced = 16

// The acquire stand-in: backend/scripts/acquire.lua's path for a plain SET NX PX with its
// noteafter.lua prelude, as one function so that the coalesced case can call it per lock.
const costPrelude = `local function noteAfter(key, meta, note, ms, lead)
  local at, unit, t = redis.pcall("PEXPIRETIME", key), "PX", ms + lead
  if type(at) == "number" and at > 0 then unit, t = "PXAT", at + lead end
  return redis.call("SET", meta, note, "NX", unit, t)
end
`

const costAcquire = `local function acquire(k, meta, queue, v, ms, round, pad, lead)
  if redis.call("EXISTS", queue) == 1 then return 0 end
  if redis.call("SET", k, v, "NX", "PX", ms) then
    if noteAfter(k, meta, round .. " " .. pad, tonumber(ms), tonumber(lead)) then return 1 end
    redis.call("DEL", k)
  end
  return 0
end
`

// backendCost measures each case runs times, interleaved, into m.
func backendCost(m measurements, addr string, runs, requests int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	ctx := context.Background()
	for run := 0; run < runs; run++ {
		for _, bc := range backendCases {
			cmd := []string{"SET", "cost:__rand_int__", "v", "NX", "PX", "30000"}
			calls, depth := requests, 16
			if bc.script != "" {
				sha, err := c.ScriptLoad(ctx, bc.script).Result()
				if err != nil {
					return err
				}
				cmd = []string{"EVALSHA", sha, "0"}
				if bc.name != "noop0" {
					cmd = []string{"EVALSHA", sha, "3", "cost:__rand_int__", "m:__rand_int__", "q:__rand_int__", "v", "30000", "r1", "5", "0"}
				}
				if bc.name == "acquire16" { // as many locks a call as a pipeline of 16 carries, one call at a time
					keys, args := []string{}, []string{}
					for range coalesced {
						keys = append(keys, "cost:__rand_int__", "m:__rand_int__", "q:__rand_int__")
						args = append(args, "v", "30000", "r1", "5", "0")
					}
					cmd = append(append([]string{"EVALSHA", sha, fmt.Sprint(len(keys))}, keys...), args...)
					calls, depth = requests/coalesced, 1
				}
			}
			if err := c.FlushAll(ctx).Err(); err != nil {
				return err
			}
			before := backendCPU([]string{addr})
			if _, err := redisBenchmark(addr, 50, depth, calls, cmd...); err != nil {
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
		"acquire script (`backend/scripts/acquire.lua`: the queue check, the lock, its note; the note outlives the lock only with a lock-delay). "+
		"The coalesced case is issue 27's first lever on the backend's side: many locks' operations in one call, so that a server "+
		"parses, dispatches and replies once per batch; its cost is per lock.\n\n"+
		"| call | µs per call | / plain `SET` |\n|---|---|---|\n", requests, runs)
	set := m.median("cost/set")
	for _, bc := range backendCases {
		v := m.median("cost/" + bc.name)
		fmt.Fprintf(&b, "| %s | %.2f | %.2fx |\n", bc.label, v, v/set)
	}
	return b.String()
}
