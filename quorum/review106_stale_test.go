package quorum

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// r106Stale is a fake node whose next armed Info reads the node's state and
// then waits (its monitor goroutine descheduled between the reply and
// observe), and whose Repair waits for a gate.
type r106Stale struct {
	*fakeNode
	mu         sync.Mutex
	armed      bool
	taken      chan struct{}
	release    chan struct{}
	repairGate chan struct{}
}

func (s *r106Stale) Info(ctx context.Context) (NodeInfo, error) {
	info, err := s.fakeNode.Info(ctx)
	s.mu.Lock()
	armed := s.armed
	s.armed = false
	taken, release := s.taken, s.release
	s.mu.Unlock()
	if armed {
		close(taken)
		<-release
	}
	return info, err
}

func (s *r106Stale) Repair(ctx context.Context, marker, expect string, counters map[string]int64, floor int64) error {
	s.mu.Lock()
	gate := s.repairGate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return s.fakeNode.Repair(ctx, marker, expect, counters, floor)
}

// review106: a check's Info read before another monitor's repair of the
// same node wrote its marker, observed after that repair set h.intact and
// h.marker from its own re-read, takes the repair for a flush: the node
// (here persistent, restarted with everything kept) is quarantined for a
// full window though nothing was lost.
func TestReview106StaleCheckAfterRepairIsAFalseFlush(t *testing.T) {
	fs, ns := fakes(3)
	for _, f := range fs {
		f.info.Persistent = true
	}
	s := &r106Stale{fakeNode: fs[2]}
	ns[2] = s
	e := newEngine(t, ns, WithMaxTTL(2*time.Second), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	review106Steady(t, e)
	gate := make(chan struct{})
	s.mu.Lock()
	s.repairGate = gate
	s.mu.Unlock()
	// node 2 restarts keeping everything (appendfsync always)
	fs[2].mu.Lock()
	fs[2].info = NodeInfo{RunID: fs[2].info.RunID + "+", Persistent: true}
	info, w := fs[2].info, fs[2].watch
	fs[2].mu.Unlock()
	e.repairing.Lock() // no repair until node 2's next check is under way
	w(info)
	// A repair marks node 2 only once its own check tested this engine's
	// presence on the new run (tendCounters); the next check is the stale one.
	eventuallyTrue(t, func() bool {
		h := e.health[2]
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.presentRun == info.RunID
	})
	taken, release := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.armed, s.taken, s.release = true, taken, release
	s.mu.Unlock()
	<-taken // monitor 2's check read node 2: the old run's marker, not intact
	e.repairing.Unlock()
	close(gate)
	eventuallyTrue(t, func() bool { return e.Status()[2].Intact }) // repaired by another monitor's tendCounters
	t.Logf("node 2 repaired: %+v marker %q", e.Status()[2], fs[2].marker)
	close(release)
	time.Sleep(50 * time.Millisecond)
	st := e.Status()[2]
	t.Logf("node 2 after the stale check: %+v", st)
	if strings.Contains(st.Why, "vanished") {
		t.Fatalf("node 2 quarantined as flushed though nothing was lost: %s", st.Why)
	}
}
