package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Issue 26's wake-up: a Redisson waiter subscribed through one replica is
// told of an unlock sent through the other. Each measurement is one
// Redisson RLock cycle on client A (its lock and unlock scripts, as the
// recorded 3.52 client sends them) while client B waits on the lock's
// channel: from A's unlock sent to B's "0" received. On one redis-server
// the unlock script publishes before it replies; through the proxy the
// release's quorum round comes first, then the message goes to every
// backend and back to each replica (package wake).

// wakeLatencies measures n wake-ups with A on addrA and B on addrB, in ms.
func wakeLatencies(s rlockScripts, addrA, addrB, name string, n int) ([]float64, error) {
	ctx := context.Background()
	a := redis.NewClient(&redis.Options{Addr: addrA, MaxRetries: -1})
	b := redis.NewClient(&redis.Options{Addr: addrB, MaxRetries: -1})
	defer a.Close()
	defer b.Close()
	key := "{wake:" + name + "}"
	ch := "redisson_lock__channel:" + key
	sub := b.Subscribe(ctx, ch)
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil { // the subscribe confirmation
		return nil, err
	}
	var ms []float64
	for i := range n + 5 { // the first five warm up
		if v, err := s.lock.Run(ctx, a, []string{key}, 30000, "a:1").Result(); err != redis.Nil {
			return nil, fmt.Errorf("lock: %v %v", v, err)
		}
		latch := fmt.Sprintf("redisson_unlock_latch:%s:%d", key, i)
		sent := time.Now()
		if v, err := s.unlock.Run(ctx, a, []string{key, ch, latch}, 0, 30000, "a:1", "PUBLISH", 5000).Int(); err != nil || v != 1 {
			return nil, fmt.Errorf("unlock: %v %v", v, err)
		}
		m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			return nil, fmt.Errorf("the waiter was not woken: %v", err)
		}
		if msg, ok := m.(*redis.Message); !ok || msg.Payload != "0" {
			return nil, fmt.Errorf("the waiter got %#v; want the unlock message 0", m)
		}
		if i >= 5 {
			ms = append(ms, float64(time.Since(sent).Microseconds())/1000)
		}
		if err := a.Del(ctx, latch).Err(); err != nil {
			return nil, err
		}
	}
	slices.Sort(ms)
	return ms, nil
}

// runWake is -only wake: one redis-server, and two replicas over five
// backends, n wake-ups each, interleaved in rounds of 50.
func runWake(e *env, root string, n int) string {
	s, err := loadRLockScripts(root)
	if err != nil {
		e.Fatalf("%v", err)
	}
	direct := e.startBackends(1)[0]
	backends := e.startBackends(5)
	bin := e.buildProxy(root)
	r1, r2 := e.startProxy(bin, backends), e.startProxy(bin, backends)
	var plain, proxied []float64
	for round := 0; len(plain) < n; round++ {
		p, err := wakeLatencies(s, direct, direct, fmt.Sprint("plain", round), 50)
		if err != nil {
			e.Fatalf("plain redis-server: %v", err)
		}
		q, err := wakeLatencies(s, r1.addr, r2.addr, fmt.Sprint("proxy", round), 50)
		if err != nil {
			e.Fatalf("through the proxy: %v", err)
		}
		plain, proxied = append(plain, p...), append(proxied, q...)
	}
	slices.Sort(plain)
	slices.Sort(proxied)
	q := func(v []float64, f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Redisson waiter woken across replicas (issue 26), ms from the unlock sent to the waiter's \"0\"\n\n"+
		"`go run ./bench -only wake`: Redisson 3.52's RLock lock and unlock scripts (its recorded transcript) on client A; client B\n"+
		"subscribed to the lock's channel; through the proxy A and B use different replicas of N=5. %d wake-ups each, interleaved.\n\n"+
		"| | p50 | p90 | p99 | max | target | |\n|---|---|---|---|---|---|---|\n", len(plain))
	for _, row := range []struct {
		name string
		v    []float64
	}{{"one redis-server", plain}, {"proxy N=5, two replicas", proxied}} {
		verdict := "met"
		if q(row.v, 0.99) > 100 {
			verdict = "**missed**"
		}
		fmt.Fprintf(&b, "| %s | %.2f | %.2f | %.2f | %.2f | p99 < 100 ms | %s |\n", row.name, q(row.v, 0.5), q(row.v, 0.9), q(row.v, 0.99), row.v[len(row.v)-1], verdict)
	}
	return b.String()
}
