package e2e

// The fault suite's row for the lock-service features: session locks
// renewed through faults, fair waiters, and lock-delay after a replica
// pause.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// sessionsAcrossFaults: owners on replica 1 take "{s}" with WAIT and
// SESSION and hold it up to 2.5 s (past its 1.5 s TTL: only renewals keep
// it) while an owner on replica 2 takes it plainly; a backend restarts
// empty meanwhile. Then a session lock "{c}" taken through replica 2 is
// left behind when replica 2 is paused past its TTL: nobody may take it
// before its lock-delay after the pause began, and once replica 2 resumes
// it is not renewed from under its new owner. Tokens only grow.
func sessionsAcrossFaults(e *faultEnv, addrs [2]string, child *exec.Cmd, h *history) {
	ctx := context.Background()
	const ttl, delay = 1500 * time.Millisecond, time.Second // delay: the row's native_lock_delay
	var (
		mu        sync.Mutex
		lastToken int64
		renewed   int // holds past the TTL that were still held at their release
		wg        sync.WaitGroup
	)
	granted := func(token int64) {
		mu.Lock()
		defer mu.Unlock()
		if token <= lastToken {
			h.fail("fencing token %d after %d", token, lastToken)
		}
		lastToken = max(lastToken, token)
	}
	stop := time.Now().Add(3 * time.Second)
	for w := range 2 { // session owners, waiting their turn, on replica 1
		wg.Go(func() {
			first := true // each worker's first grant is held past the TTL and released by LOCK.RELEASE
			for n := 0; time.Now().Before(stop); n++ {
				c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, PoolSize: 1, ReadTimeout: 10 * time.Second})
				owner := fmt.Sprintf("s%d-%d", w, n)
				try := lockAcquire(ctx, c, "{s}", owner, ttl.Milliseconds(), "WAIT", 1000, "SESSION")
				var released time.Time
				if try.ok {
					granted(try.token)
					hold := time.Duration(100+rand.IntN(2400)) * time.Millisecond
					if first {
						hold = 2400 * time.Millisecond
					}
					time.Sleep(hold)
					released = time.Now()
					if first || n%2 == 0 {
						still, rerr := c.Do(ctx, "LOCK.RELEASE", "{s}", owner).Int64()
						switch {
						case rerr == nil && still == 1 && hold > ttl:
							mu.Lock()
							renewed++
							mu.Unlock()
						case rerr == nil && still == 0:
							h.fail("%s's session lock, held %v on a live replica, was lost", owner, hold)
						}
					}
					first = false
				}
				_ = c.Close() // releases a session lock not released above
				// The session holds until released: its window is [reply, release].
				h.attemptToken("{s}", owner, try.sent, try.replied, time.Hour, try.ok, try.err, released, try.token)
			}
		})
	}
	wg.Go(func() { // a plain owner on replica 2: its window is its TTL from its send
		c := suiteClient(addrs[1])
		defer c.Close()
		for n := 0; time.Now().Before(stop); n++ {
			owner := fmt.Sprint("p", n)
			try := lockAcquire(ctx, c, "{s}", owner, ttl.Milliseconds())
			var released time.Time
			if try.ok {
				granted(try.token)
				time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
				released = time.Now()
				_ = c.Do(ctx, "LOCK.RELEASE", "{s}", owner).Err()
			}
			h.attemptToken("{s}", owner, try.sent, try.replied, ttl, try.ok, try.err, released, try.token)
			time.Sleep(50 * time.Millisecond)
		}
	})
	time.Sleep(800 * time.Millisecond)
	e.redis[0].Restart()
	wg.Wait()
	if renewed == 0 {
		h.fail("not set up: no session lock was held past its TTL")
	}

	// A session lock on replica 2, which is then paused past its TTL.
	paused := suiteClient(addrs[1])
	defer paused.Close()
	var (
		sent time.Time
		left int64
		err  error
	)
	// The restarted backend's counters are repaired once it leaves
	// quarantine; until a quorum is intact, tokens are refused (NOQUORUM).
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		sent = time.Now()
		if left, err = paused.Do(ctx, "LOCK.ACQUIRE", "{c}", "paused", ttl.Milliseconds(), "SESSION").Int64(); err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		h.fail("not set up: the session lock on replica 2: %v", err)
		return
	}
	granted(left)
	// It cannot know of the pause: its TTL is all it may count on. Expiring
	// unreleased, its lock owes the replica's lock-delay (the history check
	// judges it from the end of that TTL, earlier than the pause's end).
	h.grantDelayed("{c}", "paused", sent, time.Now(), ttl, delay, left)
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		h.fail("SIGSTOP: %v", err)
		return
	}
	stopped := time.Now()
	other := suiteClient(addrs[0])
	defer other.Close()
	var next int64
	var lastErr error
	for next == 0 && time.Since(stopped) < ttl+delay+2*time.Second {
		sent := time.Now()
		token, err := other.Do(ctx, "LOCK.ACQUIRE", "{c}", "next", 2500).Int64()
		lastErr = err
		if err == nil {
			next = token
			h.attemptToken("{c}", "next", sent, time.Now(), time.Hour, true, nil, time.Time{}, token)
			granted(token)
			if waited := time.Since(stopped); waited < delay {
				h.fail("the paused replica's lock was taken %v after the pause; want no sooner than its lock-delay %v", waited, delay)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = child.Process.Signal(syscall.SIGCONT)
	if next == 0 {
		h.fail("not set up: nobody took the paused replica's session lock once it expired (last answer: %v)", lastErr)
		return
	}
	time.Sleep(3 * 500 * time.Millisecond) // the resumed replica's renewer ticks
	if v, err := other.Get(ctx, "{c}").Result(); err != nil || v != "next" {
		h.fail("after the paused replica resumed, {c} holds %q (%v); want its new owner's", v, err)
	}
	_ = other.Do(ctx, "LOCK.RELEASE", "{c}", "next").Err()
}
