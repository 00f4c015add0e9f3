package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Fault scenarios for the ways an outside review broke mutual exclusion
// (issue 10), run beside the suite's contending clients so that their
// owners' holds go through the same checker. e2e/exclusion_test.go and restarts_test.go have one
// focused test for each.

func suiteClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 2, ReadTimeout: 10 * time.Second, DialTimeout: time.Second})
}

// suiteClients is a client of each replica.
func suiteClients(addrs [2]string) (*redis.Client, *redis.Client) {
	return suiteClient(addrs[0]), suiteClient(addrs[1])
}

// pausesAndARestart is the Redisson rows' faults: backends 3 and 4 pause,
// backend 2 restarts empty and sits out its quarantine, then 0 and 1
// pause; each seen by both replicas (at addrs).
func (e *faultEnv) pausesAndARestart(addrs [2]string, h *history) {
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer cs[0].Close()
	defer cs[1].Close()
	e.outage(cs, h, 3, 4)
	e.redis[2].Restart()
	e.seenByBoth(cs, h, "quarantined", 2)
	e.seenByBoth(cs, h, "up", 2)
	e.outage(cs, h, 0, 1)
}

// outage pauses backends i and j for a second, seen down and back up by
// both replicas (through cs).
func (e *faultEnv) outage(cs [2]*redis.Client, h *history, i, j int) {
	e.redis[i].Pause()
	e.redis[j].Pause()
	e.seenByBoth(cs, h, "down", i, j)
	time.Sleep(time.Second)
	e.redis[i].Resume()
	e.redis[j].Resume()
	e.seenByBoth(cs, h, "up", i, j)
}

// seenByBoth waits until both replicas (a client of each in cs) report each
// backend of backends in state; the row fails, not set up, where one never
// does.
func (e *faultEnv) seenByBoth(cs [2]*redis.Client, h *history, state string, backends ...int) {
	for _, i := range backends {
		if !e.awaitState(cs[0], 0, i, state) || !e.awaitState(cs[1], 1, i, state) {
			h.fail("not set up: backend %d never %s on both replicas", i, state)
		}
	}
}

// awaitState polls a replica's INFO until backend i (as the replica names
// it: its link) is in state; false after 10 s. Fault functions run off the
// test goroutine, so they report rather than fail.
func (e *faultEnv) awaitState(c *redis.Client, replica, i int, state string) bool {
	want := "addr=" + e.tox[replica][i].Listen + ",state=" + state + ","
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if info, err := c.Info(context.Background(), "redlock").Result(); err == nil && strings.Contains(info, want) {
			return true
		}
	}
	return false
}

// awaitAnswering polls a replica's INFO until backend i is in any state but
// down (up, or quarantined when quarantine is on); false after 10 s.
func (e *faultEnv) awaitAnswering(c *redis.Client, replica, i int) bool {
	link := "addr=" + e.tox[replica][i].Listen + ",state="
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		info, err := c.Info(context.Background(), "redlock").Result()
		if _, rest, found := strings.Cut(info, link); err == nil && found && !strings.HasPrefix(rest, "down,") {
			return true
		}
	}
	return false
}

// retryAcrossReplicas: replica 0's links to backends 2-4 stall for 150 ms
// while it sends SET k v NX; the same SET k v (a client's retry) through
// replica 1 wins 2-4; replica 0's links heal before its rollback. A third owner then
// tries through replica 1 until the retry's window ends.
func retryAcrossReplicas(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	p1, p2 := suiteClients(addrs)
	defer p1.Close()
	defer p2.Close()
	const ttl = 1500 * time.Millisecond
	for n := range 2 {
		key := fmt.Sprint("lock:retry:", n)
		for i := 2; i < 5; i++ {
			e.toxicOn(0, i, "stall", "latency", "upstream", 1, `{"latency":500}`)
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			ok, err := p1.SetNX(ctx, key, "v", ttl).Result()
			h.attempt(key, fmt.Sprint("first", n), t0, time.Now(), ttl, ok, err, time.Time{})
			if ok || !strings.Contains(fmt.Sprint(err), "timeout") {
				h.fail("not set up: replica 1's round got %v, %v; want NOQUORUM with timeouts", ok, err)
			}
		})
		time.Sleep(50 * time.Millisecond)
		sent := time.Now()
		ok, err := p2.SetNX(ctx, key, "v", ttl).Result()
		h.attempt(key, fmt.Sprint("retry", n), sent, time.Now(), ttl, ok, err, time.Time{})
		if !ok {
			h.fail("not set up: the retry through replica 2 got %v, %v", ok, err)
		}
		// Replica 0's votes from 2-4 time out (75 ms); its links heal before a
		// health check (200 ms) could call those backends down, as a short
		// network stall does, and its late answers and rollback go through.
		time.Sleep(time.Until(t0.Add(150 * time.Millisecond)))
		for i := 2; i < 5; i++ {
			_ = e.tox[0][i].Toxics.RemoveToxic(ctx, "stall")
		}
		wg.Wait()
		for a := 0; time.Since(sent) < ttl-200*time.Millisecond; a++ {
			s := time.Now()
			ok, err := p2.SetNX(ctx, key, fmt.Sprint("third", n, "-", a), ttl).Result()
			h.attempt(key, fmt.Sprint("third", n, "-", a), s, time.Now(), ttl, ok, err, time.Time{})
			if ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// slowNeighbours: lock requests pipelined behind a read that waits 150 ms
// for a slow backend, with TTLs of 120 ms: each OK must be written before
// its window ends, or the grant revoked. Every other pipeline has a fast
// neighbour, so some grants do go out.
func slowNeighbours(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	for i := range 4 { // a key no value holds on a quorum: reading it waits for backend 4
		_ = e.redis[i].Client().Set(ctx, "lock:split", fmt.Sprint("v", i), time.Minute).Err()
	}
	e.toxic(4, "slow", "latency", "downstream", 1, `{"latency":150}`)
	clients := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer clients[0].Close()
	defer clients[1].Close()
	const ttl = 120 * time.Millisecond
	revoked, inTime := 0, 0
	defer func() {
		if revoked == 0 || inTime == 0 {
			h.fail("not set up: %d grants revoked, %d in time; want some of each", revoked, inTime)
		}
	}()
	for n := 0; n < 40; n++ {
		c, key, owner := clients[n%2], fmt.Sprint("lock:piped:", n%3), fmt.Sprint("piped", n)
		neighbour := "lock:split"
		if n%4 >= 2 {
			neighbour = "lock:nothing" // absent everywhere: decided at once
		}
		sent := time.Now()
		cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.SetNX(ctx, key, owner, ttl)
			p.PTTL(ctx, neighbour)
			return nil
		})
		replied := time.Now()
		ok, err := cmds[0].(*redis.BoolCmd).Result()
		var released time.Time
		if ok {
			released = time.Now()
			_ = c.Eval(ctx, harness.UnlockScript, []string{key}, owner).Err()
			if replied.Before(sent.Add(ttl)) {
				inTime++
			}
		}
		if err != nil && strings.Contains(err.Error(), "could not be written") {
			revoked++
		}
		h.attempt(key, owner, sent, replied, ttl, ok, err, released)
	}
	_ = e.redis[0].Client().Del(ctx, "lock:split").Err()
	for i := 1; i < 4; i++ {
		_ = e.redis[i].Client().Del(ctx, "lock:split").Err()
	}
}

// longerReplica: replica 0 (max_ttl 3 s) takes a 2.5 s lock on backends
// 0-2 only; backend 0 restarts empty; replica 1 (max_ttl 1 s, its clients
// ask for 900 ms) tries to take the lock until the first window ends.
func longerReplica(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	p1, p2 := suiteClients(addrs)
	defer p1.Close()
	defer p2.Close()
	const ttl = 2500 * time.Millisecond
	e.toxic(3, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	e.toxic(4, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	e.awaitState(p1, 0, 3, "down")
	e.awaitState(p1, 0, 4, "down")
	sent := time.Now()
	ok, err := p1.SetNX(ctx, "lock:longer", "A", ttl).Result()
	h.attempt("lock:longer", "A", sent, time.Now(), ttl, ok, err, time.Time{})
	if !ok {
		h.fail("not set up: A's lock on backends 0-2 got %v, %v", ok, err)
	}
	for _, l := range e.tox {
		for _, i := range []int{3, 4} {
			_ = l[i].Toxics.RemoveToxic(ctx, "refuse")
		}
	}
	e.awaitState(p2, 1, 3, "up")
	e.awaitState(p2, 1, 4, "up")
	e.redis[0].Restart()
	for n := 0; time.Since(sent) < ttl-100*time.Millisecond; n++ {
		s := time.Now()
		ok, err := p2.SetNX(ctx, "lock:longer", fmt.Sprint("B", n), 900*time.Millisecond).Result()
		h.attempt("lock:longer", fmt.Sprint("B", n), s, time.Now(), 900*time.Millisecond, ok, err, time.Time{})
		if ok {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reentrantOutages: a Redisson owner takes a lock and re-enters it three
// times, while backend 4, then 3, then 2 is down (hold counts end up 4, 4,
// 3, 3, 3), then unlocks four times: the answers must be 0, 0, 0, 1 as on
// one Redis, and another owner trying through the other replica before the
// last unlock must not get the lock.
func reentrantOutages(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	p1, p2 := suiteClients(addrs)
	defer p1.Close()
	defer p2.Close()
	lockText, unlockText := clientScript(e.t, shaRLock), clientScript(e.t, shaRUnlock)
	const name, ch, lease = "{reentrant}", "redisson_lock__channel:{reentrant}", suiteMaxTTL
	lock := func(c *redis.Client, owner string) error {
		return c.Eval(ctx, lockText, []string{name}, lease.Milliseconds(), owner).Err()
	}
	latch := 0
	unlock := func(c *redis.Client, owner string) (any, error) {
		latch++
		return c.Eval(ctx, unlockText, []string{name, ch, fmt.Sprint("redisson_unlock_latch:{reentrant}:", latch)},
			0, lease.Milliseconds(), owner, "publish", 1000).Result()
	}
	wrong := h.fail
	sent := time.Now()
	if err := lock(p1, "O"); err != redis.Nil {
		wrong("O's lock = %v", err)
		return
	}
	held := time.Now()
	for _, i := range []int{4, 3, 2} {
		e.redis[i].Pause()
		if !e.awaitState(p1, 0, i, "down") {
			wrong("not set up: backend %d never seen down", i)
		}
		if err := lock(p1, "O"); err != redis.Nil {
			wrong("O's re-entry with backend %d down = %v", i, err)
		}
		e.redis[i].Resume()
		e.awaitState(p1, 0, i, "up")
	}
	for k, want := range []int64{0, 0, 0} {
		if v, err := unlock(p1, "O"); v != want || err != nil {
			wrong("unlock %d of 4 = %v, %v; want %d", k+1, v, err, want)
		}
	}
	s := time.Now()
	err := lock(p2, "P") // nil reply: granted; a PTTL: taken
	ok := errors.Is(err, redis.Nil)
	if ok {
		err = nil
	}
	var releasedP time.Time
	if ok {
		releasedP = time.Now()
		_, _ = unlock(p2, "P")
	}
	released := time.Now()
	if v, err := unlock(p1, "O"); v != int64(1) || err != nil {
		wrong("unlock 4 of 4 = %v, %v; want 1", v, err)
	}
	h.attempt(name, "O", sent, held, lease, true, nil, released)
	h.attempt(name, "P", s, time.Now(), lease, ok, err, releasedP)
}
