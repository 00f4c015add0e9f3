package quorum

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newEngine(t *testing.T, nodes []Node, opts ...Option) *Engine {
	t.Helper()
	// No lock-delay unless a test asks: the quarantine window is then the
	// padded max_ttl that the quarantine tests reckon with. Fake nodes
	// answer at once, but under -race on a loaded 2-core machine the
	// engine's own goroutines can wait hundreds of milliseconds for a CPU:
	// rounds wait up to 2 s (half the TTL) for a node unless a test asks
	// for less.
	base := []Option{WithLogger(slog.New(slog.DiscardHandler)), WithLockDelay(0, 0), WithNodeTimeout(2 * time.Second), WithTimeoutFactor(0.5)}
	e, err := New(nodes, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// holders counts the fakes on which key holds value.
func holders(fs []*fakeNode, key, value string) int {
	n := 0
	for _, f := range fs {
		if v, ok := f.get(key); ok && v == value {
			n++
		}
	}
	return n
}

func TestAcquireVotes(t *testing.T) {
	const down, taken, ok = "down", "taken", "ok"
	tests := []struct {
		name   string
		nodes  []string
		reason error // nil: acquired
	}{
		{"all agree", []string{ok, ok, ok, ok, ok}, nil},
		{"two down", []string{ok, down, ok, down, ok}, nil},
		{"two taken", []string{taken, ok, ok, ok, taken}, nil},
		{"three down", []string{down, ok, down, ok, down}, ErrNoQuorum},
		{"three taken", []string{taken, taken, ok, ok, taken}, ErrTaken},
		{"two taken one down", []string{taken, taken, down, ok, ok}, ErrNoQuorum},
		{"all taken", []string{taken, taken, taken, taken, taken}, ErrTaken},
		{"single node", []string{ok}, nil},
		{"three of three needs two", []string{ok, down, taken}, ErrNoQuorum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, nodes := fakes(len(tt.nodes))
			for i, s := range tt.nodes {
				switch s {
				case down:
					fs[i].setFault(errRefused, 0, nil)
				case taken:
					fs[i].put("k", "other", time.Minute)
				}
			}
			e := newEngine(t, nodes)
			g, err := e.Acquire(t.Context(), "k", "me", time.Second)
			if tt.reason == nil {
				if err != nil {
					t.Fatalf("Acquire: %v", err)
				}
				if g.Votes < e.Quorum() || g.Validity <= 0 || g.Validity > time.Second {
					t.Fatalf("grant %+v", g)
				}
				return
			}
			var rerr *RoundError
			if !errors.As(err, &rerr) || !errors.Is(err, tt.reason) {
				t.Fatalf("Acquire error = %v, want a RoundError for %v", err, tt.reason)
			}
			if n := holders(fs, "k", "me"); n != 0 {
				t.Fatalf("after a failed acquire %d nodes still hold the value: rollback missed them", n)
			}
			if holders(fs, "k", "other") != countOf(tt.nodes, taken) {
				t.Fatal("rollback touched another owner's key")
			}
		})
	}
}

func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

func TestAcquirePadsTTL(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes, WithDriftFactor(0.01))
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); err != nil {
		t.Fatal(err)
	}
	// ceil(1000 / 0.99) + 2 = 1011 + 2
	want := 1013 * time.Millisecond
	for holders(fs, "k", "v") < len(fs) { // the round decided on 2 of 3; let the third land
		time.Sleep(time.Millisecond)
	}
	for _, f := range fs {
		f.mu.Lock()
		got := f.setTTLs
		f.mu.Unlock()
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%s was written TTL %v, want [%v]", f.name, got, want)
		}
	}
	if d := e.Drift(time.Second); d != 12*time.Millisecond {
		t.Fatalf("Drift(1s) = %v, want 12ms", d)
	}
}

func TestAcquireDecidesEarly(t *testing.T) {
	fs, nodes := fakes(5)
	gate := make(chan struct{})
	fs[3].setFault(nil, 0, gate)
	fs[4].setFault(nil, 0, gate)
	e := newEngine(t, nodes, WithNodeTimeout(time.Minute), WithTimeoutFactor(0.5))
	// The two gated nodes cannot answer until the gate opens, so returning at
	// all proves the decision was taken on the first three votes.
	g, err := e.Acquire(t.Context(), "k", "v", time.Minute)
	if err != nil || g.Votes != 3 {
		t.Fatalf("Acquire = %+v, %v; want 3 votes", g, err)
	}
	close(gate) // let the stragglers finish; goleak checks they exit
	for holders(fs, "k", "v") != 5 {
		time.Sleep(time.Millisecond)
	}
}

func TestAcquireValiditySpent(t *testing.T) {
	fs, nodes := fakes(3)
	for _, f := range fs {
		f.setFault(nil, 30*time.Millisecond, nil)
	}
	// Every node answers after >= 30ms, so at most 70ms of the 100ms are left:
	// below the 75ms minimum whatever the scheduler does.
	e := newEngine(t, nodes, WithMinValidity(75*time.Millisecond), WithTimeoutFactor(0.9))
	_, err := e.Acquire(t.Context(), "k", "v", 100*time.Millisecond)
	var rerr *RoundError
	if !errors.Is(err, ErrValiditySpent) || !errors.As(err, &rerr) || rerr.Spent < 30*time.Millisecond {
		t.Fatalf("Acquire error = %v, want ErrValiditySpent after >= 30ms", err)
	}
	if n := holders(fs, "k", "v"); n != 0 {
		t.Fatalf("%d nodes still hold the value after validity was spent", n)
	}
}

func TestRoundsForOneOwnerDoNotOverlap(t *testing.T) {
	fs, nodes := fakes(3)
	for _, f := range fs {
		f.setFault(nil, 2*time.Millisecond, nil)
	}
	e := newEngine(t, nodes)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if i%2 == 0 {
				_, _ = e.Acquire(t.Context(), "k", "v", time.Second)
			} else {
				_ = e.Release(t.Context(), "k", "v")
			}
		})
	}
	wg.Wait()
	// The slot is freed only after the last round's stragglers answered.
	unlock, err := e.keys.lock(t.Context(), "k", "v")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for _, f := range fs {
		f.mu.Lock()
		maxIn := f.maxIn
		f.mu.Unlock()
		if maxIn != 1 {
			t.Fatalf("%s saw %d concurrent calls for one (key, value), want 1", f.name, maxIn)
		}
	}
}

func TestWaitingForOwnerSlotHonoursContext(t *testing.T) {
	fs, nodes := fakes(1)
	gate := make(chan struct{})
	fs[0].setFault(nil, 0, gate)
	e := newEngine(t, nodes, WithNodeTimeout(time.Minute), WithTimeoutFactor(0.5))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = e.Acquire(context.Background(), "k", "v", time.Minute)
	}()
	for fs[0].callCount("setnx") == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Acquire(ctx, "k", "v", time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context behind a running round = %v", err)
	}
	close(gate)
	<-done
}

func TestTTLBounds(t *testing.T) {
	_, nodes := fakes(1)
	e := newEngine(t, nodes, WithMaxTTL(time.Minute))
	if _, err := e.Acquire(t.Context(), "k", "v", 0); !errors.Is(err, ErrInvalidTTL) {
		t.Fatalf("zero TTL = %v", err)
	}
	if _, err := e.Acquire(t.Context(), "k", "v", time.Hour); !errors.Is(err, ErrTTLTooLong) {
		t.Fatalf("TTL above max = %v", err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, nodes := fakes(1)
	for _, opt := range []Option{WithDriftFactor(0.5), WithNodeTimeout(0), WithTimeoutFactor(0), WithMaxTTL(-1)} {
		if _, err := New(nodes, opt); err == nil {
			t.Fatal("New accepted a bad option")
		}
	}
	if _, err := New(nil); !errors.Is(err, ErrNoNodes) {
		t.Fatalf("New(nil) = %v", err)
	}
}

// A round that failed stays failed. Here node2 could not count when the
// round was sent (restart quarantine), the round fails at once (node0
// refuses), and while it waits for node2 before rolling back, node2's
// quarantine ends and it answers yes. Judged again, that yes must not turn
// the failure into a grant: the rollback is already decided, and the caller
// would be told OK with its keys deleted.
func TestFailedRoundNeverTurnsIntoAGrant(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	gate := make(chan struct{})
	fs[0].setFault(errRefused, 0, nil)
	fs[2].setFault(nil, 0, gate)
	fs[2].restart(false)
	done := make(chan error, 1)
	go func() {
		_, err := e.Acquire(t.Context(), "k", "v", 10*time.Second)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // decided: node0 refused, node2 could not count
	h := e.health[2]
	h.mu.Lock()
	h.since, h.restarted, h.recorded = time.Time{}, time.Time{}, true // its quarantine is over now
	h.mu.Unlock()
	close(gate)
	if err := <-done; !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Acquire = %v; want the NOQUORUM it was decided as", err)
	}
	for _, f := range fs[1:] {
		if _, held := f.get("k"); held {
			t.Fatalf("%s still holds the failed round's write", f.name)
		}
	}
}
