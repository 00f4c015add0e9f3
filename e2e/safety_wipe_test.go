package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault suite's total-wipe row (issue 23 D): the last row, as it
// leaves every backend young.

// totalWipe: LOCK.ACQUIRE through both replicas in turn, then every backend
// is killed at once and restarted empty (a power loss) while the clients
// hold locks; both replicas quarantine them all and refuse until the window
// has passed (no bootstrap: none may be run after a power loss), then
// LOCK.ACQUIRE through both again. Every token after the wipe must be
// larger than every token before it, and no lock may have two owners.
func totalWipe(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	cs := [2]*redis.Client{suiteClient(addrs[0]), suiteClient(addrs[1])}
	defer cs[0].Close()
	defer cs[1].Close()
	const lease = 500 * time.Millisecond
	var last int64
	n := 0
	native := func() bool {
		c, owner := cs[n%2], fmt.Sprint("W", n)
		n++
		try := lockAcquire(ctx, c, "{wipe}", owner, lease.Milliseconds())
		var released time.Time
		if try.ok {
			if try.token <= last {
				h.fail("fencing token %d after %d (a total wipe lay between them: %v)", try.token, last, last > 0)
			}
			last = max(last, try.token)
			released = time.Now()
			_ = c.Do(ctx, "LOCK.RELEASE", "{wipe}", owner).Err()
		}
		h.attempt("{wipe}", owner, try.sent, try.replied, lease, try.ok, try.err, released)
		return try.ok
	}
	for granted := 0; granted < 6 && n < 200; time.Sleep(10 * time.Millisecond) {
		if native() {
			granted++
		}
	}
	before := last
	if before == 0 {
		h.fail("not set up: no token before the wipe")
		return
	}
	time.Sleep(500 * time.Millisecond) // the load's clients hold locks now
	for _, r := range e.redis {
		r.Kill()
	}
	for _, r := range e.redis {
		r.Restart()
	}
	for i := range e.redis {
		if !e.awaitState(cs[0], 0, i, "quarantined") || !e.awaitState(cs[1], 1, i, "quarantined") {
			h.fail("not set up: backend %d never quarantined on both replicas", i)
		}
	}
	for replica := range 2 { // each replica grants again once the window has passed
		deadline := time.Now().Add(60 * time.Second)
		for n%2 != replica || !native() {
			if time.Now().After(deadline) {
				h.fail("replica %d granted nothing for 60s after the wipe", replica)
				return
			}
			if n%2 != replica {
				n++
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if last <= before {
		h.fail("tokens after the wipe end at %d, before it at %d", last, before)
	}
}
