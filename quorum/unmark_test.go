package quorum

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestUnmarksAreBoundedAndEndAtClose: releases whose unmarks keep failing
// (a backend that answers the delete, then no unmark) leave at most
// maxUnmarking of them resending in the background; the others send once;
// all of them stop when the engine closes (goleak checks TestMain).
func TestUnmarksAreBoundedAndEndAtClose(t *testing.T) {
	defer func(m int64) { maxUnmarking = m }(maxUnmarking)
	maxUnmarking = 8
	fs := []*fakeNode{newFake("a"), newFake("b"), newFake("c")}
	nodes := make([]Node, len(fs))
	for i, f := range fs {
		f.marks = true
		f.setOpFault("unmark", errors.New("connection reset"), nil)
		nodes[i] = f
	}
	e := newEngine(t, nodes, WithNodeTimeout(20*time.Millisecond))
	ctx := t.Context()
	peak := int64(0)
	for i := range 40 {
		key := fmt.Sprint("k", i)
		if _, err := e.Acquire(ctx, key, "v", time.Second); err != nil {
			t.Fatalf("Acquire = %v", err)
		}
		if err := e.Release(ctx, key, "v"); err != nil {
			t.Fatalf("Release = %v", err)
		}
		peak = max(peak, e.unmarking.Load())
	}
	if peak > maxUnmarking || peak == 0 {
		t.Fatalf("at most %d releases resent their unmarks at once; want between 1 and %d", peak, maxUnmarking)
	}
	sent := fs[0].callCount("unmark")
	time.Sleep(300 * time.Millisecond)
	if more := fs[0].callCount("unmark"); more <= sent {
		t.Fatalf("no failed unmark was sent again in 300 ms (%d, then %d)", sent, more)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := e.unmarking.Load(); n != 0 {
		t.Fatalf("%d releases still unmarking after Close", n)
	}
}
