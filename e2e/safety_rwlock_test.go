package e2e

import (
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// rwAcrossFaults: Redisson's RReadWriteLock through both replicas, three
// readers and one writer on each, while two backends are paused, one
// restarts empty (and sits out its quarantine) and two others pause. Every
// grant is recorded, reads as shared: no writer may be inside beside any
// other holder; readers must have shared the lock at least once.
func rwAcrossFaults(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	s := loadRWScripts(e.t)
	const name, lease = "{rwsuite}", 1500
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readers, writers, shared atomic.Int64
	for w := range 8 {
		write := w%4 == 3
		wg.Go(func() {
			c := suiteClient(addrs[w%2])
			defer c.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r := &rwClient{c: c, s: s, name: name, owner: fmt.Sprintf("rw%d-%d", w, n), latchMS: 500}
				sent := time.Now()
				ok, err := r.lock(e.t, write, lease)
				replied := time.Now()
				var released time.Time
				if ok {
					inside := &readers
					if write {
						inside = &writers
					}
					if n := inside.Add(1); !write && n > 1 {
						shared.Add(1)
					}
					time.Sleep(time.Duration(5+n%20) * time.Millisecond)
					inside.Add(-1)
					released = time.Now()
					if v, uerr := r.unlock(e.t, write, lease); uerr != nil && uerr != redis.Nil && !isNoQuorum(uerr) || v == nil && uerr == nil {
						h.fail("%s's unlock = %v, %v", r.owner, v, uerr)
					}
				}
				h.attemptRW(name, r.owner+map[bool]string{true: ":write"}[write], !write, sent, replied, lease*time.Millisecond, ok, err, released)
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	e.pausesAndARestart(addrs, h)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if shared.Load() == 0 {
		h.fail("not set up: readers never shared the lock")
	}
}
