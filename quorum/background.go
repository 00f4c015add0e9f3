package quorum

import "sync"

// background is the engine's goroutines that its life ends (the health
// monitors, the confirmations still retried): Close waits for them. One
// started as Close waits is refused (Go answers false) rather than added to
// a WaitGroup being waited on, which sync forbids (a release finishing as
// its replica shut down did exactly that: CI of 67999d2).
type background struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs f in a goroutine Wait waits for, and reports it did; false, once
// Wait was called: f does not run, and the caller does what f would have
// done at its end.
func (b *background) Go(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Go(f)
	return true
}

// Wait refuses every later Go and waits for the goroutines started before.
func (b *background) Wait() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wg.Wait()
}
