package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hostile tenant's load (issue 25): each mix of tenant billing, and the
// child process it runs in beside the honest tenant (hostile.go).

// hostileMix starts one mix of billing's load on addr and returns its stop,
// which also reports what the mix managed to set up.
type hostileMix struct {
	name  string
	start func(addr string) (stop func() string)
}

var hostileMixes = []hostileMix{
	{"pattern storm: 1 connection x 1024 patterns of 256 bytes, 10 PUBLISH/s", func(a string) func() string { return storm(a, 1, 10) }},
	{"pattern storm: 4 connections, 50 PUBLISH/s", func(a string) func() string { return storm(a, 4, 50) }},
	{"2750 parked WAIT waiters + 2 connections pipelining SESSION locks", func(a string) func() string { return waitersAndSessions(a) }},
	{"all of it", func(a string) func() string {
		stops := []func() string{storm(a, 4, 50), waitersAndSessions(a)}
		return func() string {
			var out []string
			for _, s := range stops {
				out = append(out, s())
			}
			return strings.Join(out, "; ")
		}
	}},
}

func billingClient(addr string, pool int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Username: "billing", Password: "b-pass", PoolSize: pool, MaxRetries: -1, ReadTimeout: 60 * time.Second})
}

// storm subscribes 1024 star-heavy patterns of 256 bytes over conns
// connections (as many as the proxy takes) and publishes perSec messages a
// second on billing's own 1000-byte channels.
func storm(addr string, conns, perSec int) func() string {
	ctx, cancel := context.WithCancel(context.Background())
	var subs []*redis.PubSub
	var clients []*redis.Client
	taken := 0
	for c := range conns {
		cl := billingClient(addr, 1)
		clients = append(clients, cl)
		ps := cl.PSubscribe(ctx)
		subs = append(subs, ps)
		for i := range 1024 / conns {
			suffix := fmt.Sprintf("*y%d:%d", c, i)
			p := "billing:" + strings.Repeat("*x", (256-len(suffix)-8)/2) + suffix
			if ps.PSubscribe(ctx, p) != nil {
				break
			}
			if _, err := ps.Receive(ctx); err != nil {
				break
			}
			taken++
		}
		go func() { // read (and drop) whatever arrives, as a client would
			for ctx.Err() == nil {
				if _, err := ps.Receive(ctx); err != nil && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	pub := billingClient(addr, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second / time.Duration(perSec))
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				go pub.Publish(ctx, fmt.Sprintf("billing:%d:%s", i, strings.Repeat("x", 1000)), "x")
			}
		}
	}()
	return func() string {
		cancel()
		<-done
		for _, ps := range subs {
			_ = ps.Close()
		}
		for _, c := range append(clients, pub) {
			_ = c.Close()
		}
		return fmt.Sprintf("%d patterns taken", taken)
	}
}

// waitersAndSessions takes what the limits let billing keep the proxy busy
// with: locks for 2750 waiters to wait on, SESSION locks pipelined on 2
// connections up to max_session_locks_per_client (the proxy renews them),
// then 2750 WAIT waiters (max_waiters_per_user of them park: the proxy
// renews their places). Then it keeps asking past the limits: each session
// connection for one more lock every 100 ms, each waiter connection for its
// refused waiters. stop reports what it got.
func waitersAndSessions(addr string) func() string {
	ctx, cancel := context.WithCancel(context.Background())
	holder := billingClient(addr, 4)
	const waiters = 2750
	p := holder.Pipeline()
	for i := range waiters {
		p.Do(ctx, "LOCK.ACQUIRE", fmt.Sprint("billing:held:", i), "holder", 120000)
	}
	_, _ = p.Exec(ctx)
	var refused, sessions atomic.Int64
	var wg, taken sync.WaitGroup
	var clients []*redis.Client
	for c := range 2 {
		cl := billingClient(addr, 1)
		clients = append(clients, cl)
		taken.Add(1)
		wg.Go(func() {
			batch := 500
			for i := 0; ctx.Err() == nil; i++ {
				p := cl.Pipeline()
				for j := range batch {
					p.Do(ctx, "LOCK.ACQUIRE", fmt.Sprintf("billing:s:%d:%d:%d", c, i, j), "o", 3000, "SESSION")
				}
				cmds, _ := p.Exec(ctx)
				for _, cmd := range cmds {
					if cmd.Err() == nil {
						sessions.Add(1)
					}
				}
				if ctx.Err() == nil && cmds != nil && cmds[len(cmds)-1].Err() != nil {
					if batch > 1 { // the limit: from now on one more at a time
						batch = 1
						taken.Done()
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	taken.Wait()
	for c := range waiters / 50 {
		cl := billingClient(addr, 1)
		clients = append(clients, cl)
		wg.Go(func() {
			for ctx.Err() == nil {
				p := cl.Pipeline()
				for i := range 50 {
					p.Do(ctx, "LOCK.ACQUIRE", fmt.Sprint("billing:held:", c*50+i), "w", 30000, "WAIT", 60000)
				}
				cmds, _ := p.Exec(ctx)
				for _, cmd := range cmds {
					if err := cmd.Err(); err != nil && err != redis.Nil && ctx.Err() == nil {
						refused.Add(1)
					}
				}
				if ctx.Err() == nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	return func() string {
		parked := "?"
		if info, err := holder.Info(context.Background(), "clients").Result(); err == nil {
			for _, l := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(l, "blocked_clients:"); ok {
					parked = v
				}
			}
		}
		cancel()
		for _, c := range clients {
			_ = c.Close()
		}
		wg.Wait()
		_ = holder.Close()
		return fmt.Sprintf("%d session locks taken, %s waiters parked, %d WAIT refusals", sessions.Load(), parked, refused.Load())
	}
}

// startHostileProcess runs mix i against addr in a child process (this
// binary with -hostile-load), as a hostile tenant runs its own machines:
// the honest clients' latencies are then not those of a Go scheduler they
// share with the hostile's thousands of goroutines. Its stop ends the load
// and returns what the mix managed to set up.
func startHostileProcess(e *env, i int, addr string) func() string {
	self, err := os.Executable()
	if err != nil {
		e.Fatalf("%v", err)
	}
	cmd := exec.Command(self, "-hostile-load", strconv.Itoa(i), "-hostile-addr", addr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.Fatalf("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.Fatalf("%v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		e.Fatalf("start hostile load: %v", err)
	}
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		e.Fatalf("hostile load did not start: %q %v", line, err)
	}
	return func() string {
		_ = stdin.Close() // the child stops its load when its stdin closes
		line, _ := out.ReadString('\n')
		_ = cmd.Wait()
		return strings.TrimSpace(line)
	}
}

// hostileLoad is the child's side of startHostileProcess: mix i against
// addr until stdin closes, then one line saying what it set up.
func hostileLoad(i int, addr string) {
	if i < 0 || i >= len(hostileMixes) {
		log.Fatalf("no hostile mix %d", i)
	}
	stop := hostileMixes[i].start(addr)
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Println(stop())
}
