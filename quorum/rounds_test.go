package quorum

// Rollback, release, extend, read and force-release rounds against fake
// nodes with injected faults.

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRollbackWaitsForStragglers(t *testing.T) {
	fs, nodes := fakes(5)
	for _, f := range fs[:3] {
		f.put("k", "other", time.Minute)
	}
	fs[4].setFault(nil, 20*time.Millisecond, nil) // answers "set" after the decision
	e := newEngine(t, nodes)
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); !errors.Is(err, ErrTaken) {
		t.Fatalf("Acquire error = %v, want ErrTaken", err)
	}
	if n := holders(fs, "k", "v"); n != 0 {
		t.Fatalf("%d nodes hold the value once Acquire returned: the straggler's write outlived the rollback", n)
	}
}
func TestRollbackSparesOwnEarlierLock(t *testing.T) {
	// The owner already holds "v" on three nodes; repeating SET NX with the same
	// value is refused there. The rollback must not delete those three copies.
	fs, nodes := fakes(5)
	for _, f := range fs[:3] {
		f.put("k", "v", time.Minute)
	}
	e := newEngine(t, nodes)
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); !errors.Is(err, ErrTaken) {
		t.Fatalf("Acquire error = %v, want ErrTaken", err)
	}
	if n := holders(fs, "k", "v"); n != 3 {
		t.Fatalf("the earlier lock is held on %d nodes after the rollback, want 3", n)
	}
	for _, f := range fs[:3] {
		if f.callCount("delifeq") != 0 {
			t.Fatalf("rollback was sent to %s, which answered taken", f.name)
		}
	}
}
func TestRollbackReachesTimedOutNodes(t *testing.T) {
	fs, nodes := fakes(5)
	errReset := errors.New("connection reset")
	for _, f := range fs[:3] {
		f.setFault(errReset, 0, nil)
	}
	e := newEngine(t, nodes)
	_, err := e.Acquire(t.Context(), "k", "v", time.Second)
	if !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Acquire error = %v, want ErrNoQuorum", err)
	}
	for _, f := range fs {
		if f.callCount("undo") != 1 {
			t.Fatalf("%s got %d rollbacks, want 1 (failed nodes may hold the write too)", f.name, f.callCount("undo"))
		}
	}
	// Each node once in the reply, its rollback's fate joined to its entry.
	want := "quorum: acquire 2/5 acquired, need 3: " +
		"node0: connection reset, and its rollback failed (connection reset): the key expires with its TTL; " +
		"node1: connection reset, and its rollback failed (connection reset): the key expires with its TTL; " +
		"node2: connection reset, and its rollback failed (connection reset): the key expires with its TTL"
	if err.Error() != want {
		t.Fatalf("error text\n got %q\nwant %q", err.Error(), want)
	}
}

// A refused connection sent nothing: no rollback goes there, and the reply
// says no "rollback failed" for it.
func TestNoRollbackWhereNothingWasSent(t *testing.T) {
	fs, nodes := fakes(5)
	for _, f := range fs[:3] {
		f.setFault(fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED), 0, nil)
	}
	e := newEngine(t, nodes)
	_, err := e.Acquire(t.Context(), "k", "v", time.Second)
	if !errors.Is(err, ErrNoQuorum) || strings.Contains(err.Error(), "rollback") {
		t.Fatalf("Acquire error = %v; want NOQUORUM without rollback failures", err)
	}
	for i, f := range fs {
		if n := f.callCount("undo"); n != boolInt(i >= 3) {
			t.Fatalf("%s got %d rollbacks", f.name, n)
		}
	}
}
func TestReleaseOutcomes(t *testing.T) {
	tests := []struct {
		name         string
		held, broken int
		reason       error
	}{
		{"held everywhere", 5, 0, nil},
		{"held on a quorum", 3, 0, nil},
		{"held on three, two down", 3, 2, nil},
		{"held on a minority", 2, 0, ErrNotHeld},
		{"held nowhere", 0, 0, ErrNotHeld},
		{"held on two, three down", 2, 3, ErrNoQuorum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, nodes := fakes(5)
			for i, f := range fs {
				if i < tt.held {
					f.put("k", "v", time.Minute)
				} else if i < tt.held+tt.broken {
					f.setFault(errRefused, 0, nil)
				}
			}
			err := newEngine(t, nodes).Release(t.Context(), "k", "v")
			if tt.reason == nil && err != nil || tt.reason != nil && !errors.Is(err, tt.reason) {
				t.Fatalf("Release error = %v, want %v", err, tt.reason)
			}
		})
	}
}
func TestExtend(t *testing.T) {
	fs, nodes := fakes(5)
	for _, f := range fs[:3] {
		f.put("k", "v", time.Second)
	}
	fs[3].put("k", "other", time.Second)
	e := newEngine(t, nodes)
	if _, err := e.Extend(t.Context(), "k", "v", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs[:3] {
		if f.setTTLs[0] != e.PaddedTTL(10*time.Second) {
			t.Fatalf("extended to %v, want padded %v", f.setTTLs[0], e.PaddedTTL(10*time.Second))
		}
	}
	if _, err := e.Extend(t.Context(), "k", "other", 10*time.Second); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend by a non-owner = %v, want ErrNotHeld", err)
	}
}
func TestRead(t *testing.T) {
	fs, nodes := fakes(5)
	ttls := []time.Duration{10, 20, 30, 40, 50}
	for i, f := range fs {
		f.put("k", "v", ttls[i]*time.Second)
	}
	e := newEngine(t, nodes)
	got, err := e.Read(t.Context(), "k")
	if err != nil || !got.Found || got.Value != "v" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	// The 3rd largest TTL is 30s, less its drift allowance (and test time).
	if limit := 30*time.Second - e.Drift(30*time.Second); got.TTL > limit || got.TTL < limit-time.Second {
		t.Fatalf("TTL %v, want the 3rd largest less drift, %v", got.TTL, limit)
	}
	if g, err := e.Get(t.Context(), "k"); err != nil || g.Value != "v" {
		t.Fatalf("Get = %+v, %v", g, err)
	}

	fs[0].put("k", "w", time.Minute)
	fs[1].put("k", "w", time.Minute)
	fs[2].setFault(errRefused, 0, nil)
	if _, err := e.Read(t.Context(), "k"); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("a split read with a node down = %v, want ErrNoQuorum", err)
	}
	fs[2].setFault(nil, 0, nil)
	fs[2].put("k", "x", time.Minute)
	if got, err := e.Read(t.Context(), "k"); err != nil || got.Found {
		t.Fatalf("a 2/1/2 split = %+v, %v; want not found", got, err)
	}
	if got, err := e.Read(t.Context(), "missing"); err != nil || got.Found {
		t.Fatalf("missing key = %+v, %v", got, err)
	}
}
func TestForceRelease(t *testing.T) {
	fs, nodes := fakes(5)
	for _, f := range fs {
		f.put("k", "v", time.Minute)
	}
	fs[4].setFault(errRefused, 0, nil)
	e := newEngine(t, nodes)
	if existed, err := e.ForceRelease(t.Context(), "k"); err != nil || !existed {
		t.Fatalf("ForceRelease = %v, %v", existed, err)
	}
	if n := holders(fs[:4], "k", "v"); n != 0 {
		t.Fatalf("%d live nodes still hold the key", n)
	}
	for _, f := range fs[:3] {
		f.setFault(errRefused, 0, nil)
	}
	if _, err := e.ForceRelease(t.Context(), "k"); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("ForceRelease with 4 down = %v, want ErrNoQuorum", err)
	}
}
