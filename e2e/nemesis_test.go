package e2e

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// pauseNemesis pauses h's backends one at a time until the returned stop
// is called (it waits for the last pause to end): the i-th pause waits
// before, then pauses backend b for paused, as step(i) says.
func pauseNemesis(h *harness.Harness, step func(i int) (b int, before, paused time.Duration)) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !done.Load(); i++ {
			n, before, paused := step(i)
			time.Sleep(before)
			h.Backend[n].Pause()
			time.Sleep(paused)
			h.Backend[n].Resume()
		}
	})
	return func() { done.Store(true); wg.Wait() }
}
