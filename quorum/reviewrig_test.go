package quorum

import (
	"context"
	"testing"
	"time"
)

// grantResult is an acquire's outcome, from fencedAsync.
type grantResult struct {
	g   Grant
	err error
}

// fencedAsync runs AcquireFenced of key by owner on its own goroutine.
func fencedAsync(e *Engine, key, owner string, ttl time.Duration) <-chan grantResult {
	done := make(chan grantResult, 1)
	go func() {
		g, err := e.AcquireFenced(context.Background(), key, owner, ttl)
		done <- grantResult{g, err}
	}()
	return done
}

// secondOwner asks for key as owner b for ttl, the first owner's grant
// having been answered at aAt: the test is skipped when b was asked later
// than within after it, too late to say anything of the first owner's
// window (a loaded machine).
func secondOwner(t *testing.T, e *Engine, key string, ttl time.Duration, aAt time.Time, within time.Duration) (Grant, error) {
	t.Helper()
	g, err := e.Acquire(context.Background(), key, "b", ttl)
	if asked := time.Since(aAt); asked > within {
		t.Skipf("b asked %s after a's grant, past a's window: says nothing (a loaded machine)", asked)
	}
	return g, err
}

// checkedAgain waits until engine e's monitor of node i has finished a
// check that began after the call: what a test waits for instead of
// sleeping "several health intervals" (a loaded machine may run none).
func checkedAgain(t *testing.T, e *Engine, i int) {
	t.Helper()
	checked := func() time.Time {
		h := e.health[i]
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.checked
	}
	first := time.Now()
	waitFor(t, "a check of the node that ended after the call", func() bool { return checked().After(first) })
	second := checked() // that check may have begun before the call: the next one did not
	waitFor(t, "a check of the node that began after the call", func() bool { return checked().After(second) })
}
