package backend

import (
	"errors"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A repair of more counters than one script carries goes in chunks, the
// marker with the last. A backend flushed between two chunks (a restart
// without its data, a FLUSHALL) has lost the chunks before: it must not be
// marked intact by the last one, whose own check (the marker is still the
// one the engine read, "" none) cannot tell, since a flushed backend has
// none either (helper-120: it was marked with only the last chunk's
// counters, and a lock counter of an earlier chunk started again from the
// shared counter, below tokens it had given).
func TestRepairFlushedBetweenChunksIsNotMarked(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n, c := newNode(t, s), s.Client()
	ctx := t.Context()
	info, err := n.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counters := review121Counters(1201, 1000) // three chunks
	for _, flushAfter := range []int{1, 2} {
		c.FlushAll(ctx)
		chunks := 0
		repairChunkDone = func() {
			if chunks++; chunks == flushAfter {
				c.FlushAll(ctx)
			}
		}
		err := n.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0)
		repairChunkDone = nil
		marked := c.Get(ctx, quorum.IntactKey).Val()
		if err == nil || marked != "" {
			t.Errorf("flushed after chunk %d: Repair = %v, marker %q; want %v and no marker", flushAfter, err, marked, quorum.ErrMarkerChanged)
		} else if !errors.Is(err, quorum.ErrMarkerChanged) {
			t.Errorf("flushed after chunk %d: Repair = %v; want %v", flushAfter, err, quorum.ErrMarkerChanged)
		}
	}
	// Unflushed, the same repair marks it with every counter.
	c.FlushAll(ctx)
	if err := n.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0); err != nil {
		t.Fatal(err)
	}
	if c.Get(ctx, quorum.IntactKey).Val() == "" {
		t.Fatal("not marked")
	}
	for k, v := range counters {
		if got, _ := c.Get(ctx, k).Int64(); got != v {
			t.Fatalf("%s = %d; want %d", k, got, v)
		}
	}
	if got := c.SCard(ctx, quorum.CountersKey).Val(); got != int64(len(counters)) {
		t.Fatalf("%d counters listed; want %d", got, len(counters))
	}
	if len(c.Keys(ctx, quorum.RepairKey("*")).Val()) != 0 {
		t.Fatal("the repair's progress key is left behind")
	}
}

// Two replicas repairing one backend at once (each engine repairs a node it
// finds unmarked) do not cancel each other: each repair's chunks check its
// own note, not whichever repair started last (helper-121: with one note
// for all, every first chunk made the other repair in progress fail, and
// with several replicas and many counters none ever finished).
func TestConcurrentRepairsInChunksBothFinish(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	a, b, c := newNode(t, s), newNode(t, s), s.Client()
	ctx := t.Context()
	info, err := a.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counters := review121Counters(1201, 1000) // three chunks
	var errB error
	inB := false
	repairChunkDone = func() {
		if inB {
			return
		}
		inB = true // after a's first chunk, b's whole repair
		errB = b.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0)
	}
	defer func() { repairChunkDone = nil }()
	errA := a.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0)
	if errA != nil || errB != nil {
		t.Fatalf("repairs at once: a %v, b %v; want both to finish", errA, errB)
	}
	if c.Get(ctx, quorum.IntactKey).Val() == "" {
		t.Fatal("not marked")
	}
}
