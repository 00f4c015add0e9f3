package quorum

import (
	"context"
	"testing"
	"time"
)

// TestForceReleaseReadsAgainWhereTheLockChanged: a force release deletes
// only what its first round read; where the lock changed before the
// delete landed (here: rewritten on three nodes), it reads and deletes
// again, and reports the lock as it was (existed).
func TestForceReleaseReadsAgainWhereTheLockChanged(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	for _, f := range fs {
		f.put("k", "v", time.Minute)
	}
	gate := make(chan struct{})
	for _, f := range fs[:3] {
		f.setOpFault("del", nil, gate)
	}
	type result struct {
		existed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		existed, err := e.ForceRelease(context.Background(), "k")
		done <- result{existed, err}
	}()
	for deadline := time.Now().Add(5 * time.Second); fs[2].callCount("del") == 0 || fs[1].callCount("del") == 0 || fs[0].callCount("del") == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the delete never reached nodes 0-2")
		}
		time.Sleep(time.Millisecond)
	}
	for _, f := range fs[:3] { // the lock changes there before the delete lands
		f.put("k", "w", time.Minute)
		f.setOpFault("del", nil, nil)
	}
	close(gate)
	r := <-done
	if r.err != nil || !r.existed {
		t.Fatalf("ForceRelease = %v, %v; want true (existed)", r.existed, r.err)
	}
	for i, f := range fs {
		if _, held := f.get("k"); held {
			t.Errorf("node %d still holds k", i)
		}
		if n := f.callCount("print"); i < 3 && n != 2 || i >= 3 && n < 1 {
			t.Errorf("node %d was read %d times", i, n)
		}
	}
}
