package quorum

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRenewBatches: a renewal of many locks is one operation per node (per
// maxLeasesPerOp locks), each lock judged by its own quorum.
func TestRenewBatches(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	ctx := context.Background()
	const n = 600 // several operations per node: maxLeasesPerOp each, the rest in the last
	leases := make([]Lease, n)
	for i := range leases {
		leases[i] = Lease{Key: fmt.Sprintf("k%d", i), Value: "v", TTL: 10 * time.Second}
		if _, err := e.Acquire(ctx, leases[i].Key, "v", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// An acquire answers at a quorum: let the third node's writes land.
	eventuallyTrue(t, func() bool {
		for _, l := range leases {
			if holders(fs, l.Key, "v") != 3 {
				return false
			}
		}
		return true
	})
	// k1 is gone on two nodes (expired there): it cannot be held.
	for _, f := range fs[:2] {
		f.put("k1", "v", -time.Second)
	}
	// k2 is held by another owner on two nodes.
	for _, f := range fs[:2] {
		f.put("k2", "other", time.Minute)
	}
	fs[2].setFault(errRefused, 0, nil) // one node down: Q = 2 of the other two
	errs := e.Renew(ctx, leases)
	for i, err := range errs {
		switch i {
		case 1, 2:
			if !errors.Is(err, ErrNotHeld) {
				t.Errorf("lease %d: %v, want not held", i, err)
			}
		default:
			if err != nil {
				t.Fatalf("lease %d: %v", i, err)
			}
		}
	}
	for i, f := range fs {
		if got, want := f.callCount("renew"), (n+maxLeasesPerOp-1)/maxLeasesPerOp; got != want {
			t.Errorf("node %d got %d renew operations for %d locks, want %d", i, got, n, want)
		}
	}
	// The renewed TTL is the new one (padded), not the acquire's.
	for _, f := range fs[:2] {
		f.mu.Lock()
		left := time.Until(f.data["k0"].expiry)
		f.mu.Unlock()
		if left < 9*time.Second {
			t.Errorf("%s: k0 has %v left after a renewal to 10s", f.name, left)
		}
	}
}

// TestRenewJudgesEachLock: with only Q-1 nodes answering, nothing is
// renewed and the reason is the service, not the lock; a renewal that finds
// its caller's window spent is refused.
func TestRenewJudgesEachLock(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	ctx := context.Background()
	if _, err := e.Acquire(ctx, "a", "v", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	fs[0].setFault(errRefused, 0, nil)
	fs[1].setFault(errRefused, 0, nil)
	if err := e.Renew(ctx, []Lease{{Key: "a", Value: "v", TTL: 5 * time.Second}})[0]; !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("renew with one node of three: %v, want no quorum", err)
	}
	fs[0].setFault(nil, 0, nil)
	fs[1].setFault(nil, 0, nil)
	// The caller's window opened 5s ago: a 5s lease is spent before any answer.
	late := WithArrival(ctx, time.Now().Add(-5*time.Second))
	if err := e.Renew(late, []Lease{{Key: "a", Value: "v", TTL: 5 * time.Second}})[0]; !errors.Is(err, ErrValiditySpent) {
		t.Fatalf("renew of a spent window: %v, want validity spent", err)
	}
	var ttlErr *TTLError
	if err := e.Renew(ctx, []Lease{{Key: "a", Value: "v", TTL: time.Hour}})[0]; !errors.As(err, &ttlErr) {
		t.Fatalf("renew beyond max_ttl: %v, want a TTL error", err)
	}
}

// TestRenewDoesNotCountQuarantined: a node restarted empty may not count
// toward a renewal's quorum, as for Extend.
func TestRenewDoesNotCountQuarantined(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	ctx := context.Background()
	if _, err := e.Acquire(ctx, "a", "v", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	fs[0].restart(false)
	fs[0].put("a", "v", time.Minute) // whatever it says, it cannot count yet
	fs[1].setFault(errRefused, 0, nil)
	if err := e.Renew(ctx, []Lease{{Key: "a", Value: "v", TTL: 5 * time.Second}})[0]; !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("renew with a quarantined node as the second vote: %v, want no quorum", err)
	}
}
