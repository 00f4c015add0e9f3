package quorum

import (
	"context"
	"testing"
	"time"
)

// review108 (sound): othersMayBeMarked counts a never-read node as "may be
// marked". An unmarked deployment (no bootstrap, backends older than the
// window) with one backend down at the replica's start waits one window
// from first sight, then votes and is marked: bounded, not forever.
func TestReview108UnmarkedDeploymentWithDownNodeRecovers(t *testing.T) {
	fs, ns := fakes(3)
	fs[2].mu.Lock()
	fs[2].infoErr, fs[2].err = errRefused, errRefused
	fs[2].mu.Unlock()
	e := newEngine(t, ns, WithMaxTTL(500*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	t.Logf("node 0 at start: %q", e.Status()[0].Why)
	start := time.Now()
	eventuallyTrue(t, func() bool {
		_, err := e.Acquire(context.Background(), "k", "a", 400*time.Millisecond)
		return err == nil
	})
	t.Logf("granted after %s (window %s); node 0: %+v", time.Since(start), e.QuarantineWindow(), e.Status()[0])
}
