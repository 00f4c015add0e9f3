package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault suite's row for the waiters' promises of the third review
// (issue 23 E1, E2): a queued waiter goes before every other acquirer, and
// a waiter that hung up leaves the queue whatever it sent before.

// waitersFirst, three times: H holds "{queue}" (LOCK.ACQUIRE ... SESSION
// through replica 1); a ghost queues behind it through replica 2, sends one stray byte and
// hangs up; a live waiter W queues through replica 2; overtakers send SET NX
// PX and LOCK.ACQUIRE (without WAIT) through both replicas all along. When
// H releases, W must be granted, promptly (the ghost left the queue when it
// hung up: granted in its place, it would hold the key for its TTL and
// lock-delay), and no overtaker may be granted while W waits.
func waitersFirst(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	waiter := redis.NewClient(&redis.Options{Addr: addrs[1], MaxRetries: -1, ReadTimeout: 30 * time.Second})
	// H holds a SESSION lock (one connection): renewed until H releases it,
	// it never ends by expiry however slow the set-up, so every grant before
	// W's is an overtaking. (With a 1.5 s lease, a loaded CI machine let H's
	// lock expire while the ghost was being queued, and an overtaker took
	// the free key, legally, before W had queued.)
	holderConn := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
	for _, c := range []*redis.Client{cs[0], cs[1], waiter, holderConn} {
		defer c.Close()
	}
	const key, lease = "{queue}", 1500 * time.Millisecond
	queued := func(who string) bool { // who waits in the key's queue on a quorum
		n := 0
		for _, r := range e.redis {
			if _, err := r.Client().ZScore(ctx, "__redlock:q:"+key, who).Result(); err == nil {
				n++
			}
		}
		return n >= 3
	}
	awaitQueued := func(who string) bool {
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if queued(who) {
				return true
			}
		}
		return false
	}
	for round := range 3 {
		holder := fmt.Sprint("H", round)
		var got nativeTry
		for end := time.Now().Add(10 * time.Second); !got.ok && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			got = lockAcquire(ctx, holderConn, key, holder, lease.Milliseconds(), "SESSION")
		}
		if !got.ok {
			h.fail("not set up: round %d: the holder never got the key", round)
			return
		}
		if nc, err := net.Dial("tcp", addrs[1]); err == nil { // the ghost
			fmt.Fprintf(nc, "LOCK.ACQUIRE %s ghost%d %d WAIT 20000\r\nx", key, round, lease.Milliseconds())
			if !awaitQueued(fmt.Sprint("ghost", round)) {
				h.fail("not set up: round %d: the ghost never queued", round)
			}
			nc.Close()
		}
		var granted atomic.Int64 // W's grant, unix ns
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := fmt.Sprint("W", round)
			try := lockAcquire(ctx, waiter, key, w, lease.Milliseconds(), "WAIT", 15000)
			var released time.Time
			if try.ok {
				granted.Store(try.replied.UnixNano())
				released = time.Now()
				_ = waiter.Do(ctx, "LOCK.RELEASE", key, w).Err()
			}
			h.attempt(key, w, try.sent, try.replied, lease, try.ok, try.err, released)
			if !try.ok && try.err == nil {
				h.fail("round %d: the live waiter's WAIT ended with nil", round)
			}
		}()
		stop := make(chan struct{})
		overtakers := sync.WaitGroup{}
		for i := range 2 {
			overtakers.Add(1)
			go func() {
				defer overtakers.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
					owner := fmt.Sprintf("O%d.%d.%d", round, i, n)
					var ok bool
					var err error
					sent := time.Now()
					if n%2 == 0 {
						ok, err = cs[i].SetNX(ctx, key, owner, lease).Result()
					} else {
						try := lockAcquire(ctx, cs[i], key, owner, lease.Milliseconds())
						ok, err = try.ok, try.err
					}
					replied := time.Now()
					if ok && granted.Load() == 0 {
						h.fail("round %d: %s took the key while a live waiter was queued", round, owner)
					}
					h.attempt(key, owner, sent, replied, lease, ok, err, time.Time{})
				}
			}()
		}
		if !awaitQueued(fmt.Sprint("W", round)) { // W queues behind the ghost's place
			h.fail("not set up: round %d: the live waiter never queued", round)
		}
		release := time.Now()
		h.attempt(key, holder, got.sent, got.replied, time.Hour, true, nil, release) // held until released
		if n, err := holderConn.Do(ctx, "LOCK.RELEASE", key, holder).Int(); n != 1 || err != nil {
			h.fail("round %d: the holder's session lock was lost before its release: %d, %v", round, n, err)
		}
		wg.Wait()
		close(stop)
		overtakers.Wait()
		if g := granted.Load(); g != 0 && time.Unix(0, g).Sub(release) > 4*time.Second {
			h.fail("round %d: the live waiter was granted %v after the release (a ghost held its place?)", round, time.Unix(0, g).Sub(release))
		}
		time.Sleep(lease) // every overtaker's lock ends before the next round
	}
}
