package e2e

import (
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// fairAcrossFaults: Redisson's RFairLock through both replicas, three
// waiters on each taking it over and over, while two backends pause, one
// restarts empty (and sits out its quarantine) and two others pause. Every
// grant is recorded: no two holders inside their windows. And in the quiet
// spells before the faults and after they healed, the lock goes in the
// order the waiters queued: a waiter whose first try was refused (it
// queued) before another one's first try was sent is granted first.
func fairAcrossFaults(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	const name, lease = "{fairsuite}", 1500
	type turn struct {
		owner                   string
		sent, joined, granted   time.Time // joined: zero when the first try was granted
		quietBefore, quietAfter bool      // sent before the faults, or after they healed
	}
	var mu sync.Mutex
	var turns []turn
	var faultsFrom, healedAt time.Time // set before and after the faults
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			c := suiteClient(addrs[w%2])
			defer c.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				f := &fairClient{c: c, name: name, owner: fmt.Sprintf("fair%d-%d", w, n), waitMS: 5000, latchMS: 500}
				tn := turn{owner: f.owner, sent: time.Now()}
				mu.Lock()
				tn.quietBefore = faultsFrom.IsZero()
				tn.quietAfter = !healedAt.IsZero()
				mu.Unlock()
				ok, err := f.lock(e.t, lease, 8*time.Second, func() { tn.joined = time.Now() })
				replied := time.Now()
				var released time.Time
				if ok {
					tn.granted = replied
					time.Sleep(time.Duration(5+n%20) * time.Millisecond)
					released = time.Now()
					if v, uerr := f.unlock(e.t, lease); uerr != nil && !isNoQuorum(uerr) || v == nil && uerr == nil {
						h.fail("%s's unlock = %v, %v", f.owner, v, uerr)
					}
				} else if lerr := f.leave(e.t); lerr != nil && !isNoQuorum(lerr) {
					h.fail("%s's acquireFailed = %v", f.owner, lerr)
				}
				h.attempt(name, f.owner, f.lastSent, replied, lease*time.Millisecond, ok, err, released)
				mu.Lock()
				turns = append(turns, tn)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	mu.Lock()
	faultsFrom = time.Now()
	mu.Unlock()
	e.pausesAndARestart(addrs, h)
	mu.Lock()
	healedAt = time.Now()
	mu.Unlock()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	// FIFO in the quiet spells: a waiter that queued before another's
	// first try is granted before it.
	pairs := 0
	for _, a := range turns {
		for _, b := range turns {
			quiet := a.quietBefore && b.quietBefore && b.granted.Before(faultsFrom) || a.quietAfter && b.quietAfter
			if !quiet || a.joined.IsZero() || !a.joined.Before(b.sent) || a.granted.IsZero() || b.granted.IsZero() {
				continue
			}
			pairs++
			if b.granted.Before(a.granted) {
				h.fail("%s queued before %s asked, but %s was granted first", a.owner, b.owner, b.owner)
			}
		}
	}
	if pairs < 10 {
		h.fail("not set up: only %d pairs of waiters queued one after the other in the quiet spells", pairs)
	}
}
