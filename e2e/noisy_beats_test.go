package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// evalCalls is how many scripts (EVALSHA and EVAL) a backend ran so far.
func evalCalls(t *testing.T, c *redis.Client) int64 {
	info, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\r\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(line, cmd); ok {
				v, _, _ := strings.Cut(rest, ",")
				k, _ := strconv.ParseInt(v, 10, 64)
				n += k
			}
		}
	}
	return n
}

// Parked waiters' places are renewed in batches: 40 idle waiters cost a
// backend a few scripts per session_tick, not one each (before: one
// QueueBeat round per waiter per tick).
func TestWaiterBeatsBatched(t *testing.T) {
	h, billing, _ := noisyTenants(t, nil)
	holder, c := billing(), billing()
	const waiters = 40 // one read batch (about 4 KB): all park at once
	var held, waits [][]any
	for i := range waiters {
		held = append(held, []any{"LOCK.ACQUIRE", fmt.Sprint("billing:b", i), "holder", 60000})
		waits = append(waits, []any{"LOCK.ACQUIRE", fmt.Sprint("billing:b", i), "w", 30000, "WAIT", 8000})
	}
	if errs := pipelineErrs(t, holder, held); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	done := make(chan []error, 1)
	go func() { done <- pipelineErrs(t, c, waits) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, _ := holder.Info(t.Context(), "clients").Result()
		if strings.Contains(info, fmt.Sprintf("blocked_clients:%d", waiters)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d waiters did not park: %s", waiters, info)
		}
	}
	time.Sleep(500 * time.Millisecond) // each has queued
	b := h.Backend[0].Client()
	before, start := evalCalls(t, b), time.Now()
	time.Sleep(3 * time.Second)
	calls, ticks := evalCalls(t, b)-before, time.Since(start)/h.Cfg.SessionTick
	if max := int64(ticks) * waiters / 4; calls > max {
		t.Errorf("%d idle waiters cost a backend %d scripts over %d session ticks; want batched beats (at most %d)", waiters, calls, ticks, max)
	}
	t.Logf("%d idle waiters: %d scripts on a backend over %d ticks", waiters, calls, ticks)
	if errs := <-done; len(errs) > 0 {
		t.Fatal(errs[0])
	}
}
