package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// The fault suite's fencing-token row.

// tokensAcrossFaults: fenced tryLock and unlock (and, every third attempt,
// LOCK.ACQUIRE and LOCK.RELEASE, every sixth SET NX PX with its token read
// by LOCK.TOKEN, on one sequence with LOCK.ACQUIRE's) through both replicas
// in turn, all along: while backends 3 and 4 are down (their counters fall
// behind), after they return and backend 2 restarts empty and leaves
// quarantine, and while backends 0 and 1 are paused (so a quorum is 2, 3
// and 4). Every token must be larger than every token before it, or
// refused.
func tokensAcrossFaults(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer cs[0].Close()
	defer cs[1].Close()
	unlockText := clientScript(e.t, shaRUnlock)
	const tryLockSHA = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"
	const name, tokens, lease = "{fenced}", "redisson_lock_token:{fenced}", 1500 * time.Millisecond
	var last, lastNative int64
	n := 0
	native := func(c *redis.Client, owner string) { // LOCK.ACQUIRE's tokens, on their own sequence
		try := lockAcquire(ctx, c, "{native}", owner, lease.Milliseconds())
		var released time.Time
		if try.ok {
			if try.token <= lastNative {
				h.fail("native fencing token %d after %d", try.token, lastNative)
			}
			lastNative = max(lastNative, try.token)
			released = time.Now()
			_ = c.Do(ctx, "LOCK.RELEASE", "{native}", owner).Err()
		}
		h.attemptToken("{native}", owner, try.sent, try.replied, lease, try.ok, try.err, released, try.token)
	}
	fixed := 0
	plain := func(c *redis.Client, owner string) { // SET NX PX, its token fixed at its first read: the same sequence
		sent := time.Now()
		ok, err := c.SetNX(ctx, "{native}", owner, lease).Result()
		replied := time.Now()
		var released time.Time
		if ok {
			s := time.Now()
			token, terr := c.Do(ctx, "LOCK.TOKEN", "{native}", owner).Int64()
			h.token("{native}", owner, s, time.Now(), token, terr)
			switch {
			case terr == nil && token <= lastNative:
				h.fail("fixed fencing token %d after %d", token, lastNative)
			case terr == nil:
				lastNative, fixed = token, fixed+1
			case !errors.Is(terr, redis.Nil) && !strings.HasPrefix(terr.Error(), "NOQUORUM"):
				h.fail("LOCK.TOKEN of a SET NX PX lock: %v", terr)
			}
			released = time.Now()
			_ = c.Eval(ctx, harness.UnlockScript, []string{"{native}"}, owner).Err()
		}
		h.attempt("{native}", owner, sent, replied, lease, ok, err, released)
	}
	// issue tries for d, and on while enough says too few were granted (a
	// busy machine grants fewer in a second), for at most 30s.
	issue := func(d time.Duration, enough func() bool) {
		start := time.Now()
		more := func() bool {
			el := time.Since(start)
			return el < d || !enough() && el < 30*time.Second
		}
		for ; more(); n++ {
			c, owner := cs[n%2], fmt.Sprint("T", n)
			if n%6 == 5 {
				plain(c, owner)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if n%3 == 2 {
				native(c, owner)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			sent := time.Now()
			v, err := c.EvalSha(ctx, tryLockSHA, []string{name, tokens}, lease.Milliseconds(), owner).Result()
			replied := time.Now()
			r, _ := v.([]any)
			ok := err == nil && len(r) == 2 && r[0] == int64(-1)
			var released time.Time
			var token int64
			if ok {
				if token, _ = r[1].(int64); token <= last {
					h.fail("fencing token %d after %d", token, last)
				} else {
					last = token
				}
				released = time.Now()
				_ = c.Eval(ctx, unlockText, []string{name, "redisson_lock__channel:{fenced}", fmt.Sprint("redisson_unlock_latch:{fenced}:", n)},
					0, lease.Milliseconds(), owner, "publish", 1000).Err()
			}
			h.attemptToken(name, owner, sent, replied, lease, ok, err, released, token)
			time.Sleep(10 * time.Millisecond)
		}
	}
	both := func(i int, state string) { e.seenByBoth(cs, h, state, i) }
	e.redis[3].Pause()
	e.redis[4].Pause()
	both(3, "down")
	both(4, "down")
	issue(time.Second, func() bool { return last >= 5 })
	tokensBefore := last
	e.redis[3].Resume()
	e.redis[4].Resume()
	both(3, "up")
	both(4, "up")
	e.redis[2].Restart()
	both(2, "quarantined")
	both(2, "up")
	e.redis[0].Pause()
	e.redis[1].Pause()
	both(0, "down")
	both(1, "down")
	issue(time.Second, func() bool { return true })
	e.redis[0].Resume()
	e.redis[1].Resume()
	if tokensBefore < 5 {
		h.fail("not set up: only %d tokens while 3 and 4 were down", tokensBefore)
	}
	if lastNative == 0 {
		h.fail("not set up: LOCK.ACQUIRE never granted")
	}
	if fixed == 0 {
		h.fail("not set up: no SET NX PX lock's token was read")
	}
	for _, r := range e.redis {
		// Redisson's token counter never expires, on one Redis as here; the
		// audit after the scenario looks for lock keys that outlive their TTL.
		_ = r.Client().Del(ctx, tokens).Err()
	}
}

// nativeTry is one timed LOCK.ACQUIRE: its token when granted; a nil reply
// (another owner holds the lock) is a refusal, not an error.
type nativeTry struct {
	token         int64
	ok            bool
	err           error
	sent, replied time.Time
}

// lockAcquire sends LOCK.ACQUIRE with args and times it.
func lockAcquire(ctx context.Context, c *redis.Client, args ...any) nativeTry {
	t := nativeTry{sent: time.Now()}
	t.token, t.err = c.Do(ctx, append([]any{"LOCK.ACQUIRE"}, args...)...).Int64()
	t.replied, t.ok = time.Now(), t.err == nil
	if errors.Is(t.err, redis.Nil) {
		t.err = nil
	}
	return t
}
