package quorum

import (
	"context"
	"errors"
	"testing"
	"time"
)

// DeleteLatch deletes an unlock latch in one round answered by a quorum, a
// node down or not; it leaves a lock under a latch's name (ErrNotLatch).
func TestDeleteLatch(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns)
	ctx := context.Background()
	const latch = "redisson_unlock_latch:{k}:r1"
	for _, f := range fs {
		f.put(latch, "1", time.Minute)
	}
	fs[2].setOpFault("dellatch", errRefused, nil)
	if existed, err := e.DeleteLatch(ctx, latch); !existed || err != nil {
		t.Fatalf("DeleteLatch = %v, %v; want deleted", existed, err)
	}
	for _, f := range fs[:2] {
		if _, ok := f.get(latch); ok || f.callCount("dellatch") != 1 {
			t.Fatalf("%s: latch left, or %d calls", f.name, f.callCount("dellatch"))
		}
	}
	fs[2].setOpFault("dellatch", nil, nil)
	if existed, err := e.DeleteLatch(ctx, "redisson_unlock_latch:{k}:none"); existed || err != nil {
		t.Fatalf("DeleteLatch of an absent latch = %v, %v; want not there", existed, err)
	}
	const named = "redisson_unlock_latch:{k}:lock"
	if _, err := e.Acquire(ctx, named, "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, func() bool { // the grant answered at two: the third may land later
		for _, f := range fs {
			if v, ok := f.get(named); !ok || v != "v" {
				return false
			}
		}
		return true
	})
	if _, err := e.DeleteLatch(ctx, named); !errors.Is(err, ErrNotLatch) {
		t.Fatalf("DeleteLatch of a lock = %v; want ErrNotLatch", err)
	}
	for _, f := range fs {
		if v, ok := f.get(named); !ok || v != "v" {
			t.Fatalf("%s: the lock under a latch's name was deleted", f.name)
		}
	}
	for _, f := range fs[:2] {
		f.setOpFault("dellatch", errRefused, nil)
	}
	var rerr *RoundError
	if _, err := e.DeleteLatch(ctx, latch); !errors.As(err, &rerr) || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("DeleteLatch with one node answering = %v; want NOQUORUM", err)
	}
}
