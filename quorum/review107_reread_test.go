package quorum

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// r107Reread models a stall of node 0's INFO replies (lock ops unaffected):
// while armed, the Info that follows a successful Repair (repair's re-read)
// times out, and the first check after that is held until the test opens
// hold (a slow reply).
type r107Reread struct {
	*fakeNode
	mu       sync.Mutex
	armed    bool
	failNext bool
	failed   bool
	hold     chan struct{}
	held     chan struct{}
}

func (s *r107Reread) Repair(ctx context.Context, marker, expect string, counters map[string]int64, floor int64) error {
	err := s.fakeNode.Repair(ctx, marker, expect, counters, floor)
	s.mu.Lock()
	if s.armed && err == nil {
		s.failNext = true // every re-read after a repair fails until the stall ends
	}
	s.mu.Unlock()
	return err
}

func (s *r107Reread) Info(ctx context.Context) (NodeInfo, error) {
	s.mu.Lock()
	fail := s.failNext
	s.failNext = false
	var hold, held chan struct{}
	if fail {
		s.failed = true // the next Info is the monitor's next check: hold it
	} else if s.failed && s.held != nil {
		hold, held = s.hold, s.held
		s.held = nil
	}
	s.mu.Unlock()
	if fail {
		return NodeInfo{}, errors.New("i/o timeout")
	}
	if held != nil {
		close(held)
		<-hold
	}
	return s.fakeNode.Info(ctx)
}

// review107: repair sets h.marker to "" and relies on its re-read (Info)
// to learn the marker it wrote. When that read fails, h.marker stays ""
// while the backend carries the new marker, and observe judges a marker
// only when h.marker != "": a flush before the next check is never seen.
// The node carries no marker, the engine knew it longer than the window
// (firstSeen), it is not persistent and its uptime is long: it votes at
// once, and is simply repaired again. Lock a, held on nodes 0 and 1, is
// lost on 0 by the flush; b is granted on 0 and 2. Fixed: the engine's
// presence (EngineKey), which no repair rewrites, is gone.
func TestReview107FailedRereadAfterRepairHidesFlush(t *testing.T) {
	fs, ns := fakes(3)
	s := &r107Reread{fakeNode: fs[0]}
	ns[0] = s
	e := newEngine(t, ns, WithMaxTTL(300*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	ctx := context.Background()
	review106Steady(t, e)
	time.Sleep(time.Second) // known longer than the window
	hold, held := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.armed, s.hold, s.held = true, hold, held
	s.mu.Unlock()
	// node 0's marker deleted: quarantined for the window, then repaired
	fs[0].mu.Lock()
	fs[0].marker = ""
	fs[0].mu.Unlock()
	eventuallyTrue(t, func() bool { return strings.Contains(e.Status()[0].Why, "vanished") })
	<-held // repaired (re-read failed), the next check of node 0 is under way
	t.Logf("node 0 repaired, marker %q; engine: %+v", fs[0].marker, e.Status()[0])
	fs[2].put("k", "stray", time.Hour) // node 2 refuses a
	a, err := e.Acquire(ctx, "k", "a", 300*time.Millisecond)
	if err != nil {
		close(hold)
		t.Fatal(err)
	}
	aAt := time.Now()
	fs[2].mu.Lock()
	delete(fs[2].data, "k")
	fs[2].mu.Unlock()
	fs[0].flush()
	s.mu.Lock()
	s.armed = false
	s.mu.Unlock()
	close(hold)
	checkedAgain(t, e, 0)
	t.Logf("node 0 after the flush: %+v (marker %q)", e.Status()[0], fs[0].marker)
	g, err := e.Acquire(ctx, "k", "b", 300*time.Millisecond)
	asked := time.Since(aAt)
	t.Logf("a granted %+v; b asked %s after", a, asked)
	if asked > 250*time.Millisecond {
		t.Skipf("b asked %s after a's grant: says nothing", asked)
	}
	if err == nil {
		t.Fatalf("b granted %+v while a holds the lock on node 1: two owners", g)
	}
	t.Logf("b: %v", err)
}
