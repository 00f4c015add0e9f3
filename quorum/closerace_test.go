package quorum

import (
	"sync"
	"testing"
	"time"
)

// TestCloseRacingBackgroundConfirmations: a release's background unmark
// (persist) started while Close waits for the engine's goroutines must not
// race with that wait (CI of 67999d2: the race detector caught
// WaitGroup.Add in persist beside Close's Wait, a release finishing as a
// replica shut down). After Close, persist runs its callbacks at once.
func TestCloseRacingBackgroundConfirmations(t *testing.T) {
	for range 20 {
		_, nodes := fakes(3)
		e := newEngine(t, nodes)
		var wg sync.WaitGroup
		var calls sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				calls.Add(1)
				e.persist([]int{0}, Op{Kind: OpUnmark, Key: "k"}, e.send([]int{0}, Op{Kind: OpUnmark, Key: "k"}, time.Now().Add(time.Second)),
					resend{tries: 1}, calls.Done)
			}
		})
		time.Sleep(time.Millisecond)
		_ = e.Close()
		close(stop)
		wg.Wait()
		calls.Wait() // every persist's callbacks ran, started before Close or after
	}
}
