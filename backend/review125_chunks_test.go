package backend

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func review125Missing(t *testing.T, s *redistest.Server, want map[string]int64) int {
	c := s.Client()
	miss := 0
	for k, v := range want {
		if got, _ := c.Get(t.Context(), k).Int64(); got < v {
			miss++
		}
	}
	return miss
}

// Same marker string reused by two repairs (A and B) with a flush between A's first chunk and B's first chunk.
func TestReview125SameMarkerFlush(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	a, b, c := newNode(t, s), newNode(t, s), s.Client()
	ctx := t.Context()
	info, _ := a.Info(ctx)
	marker := quorum.NewMarker(info.RunID)
	ca := review121Counters(1200, 1000)
	cb := map[string]int64{} // different counters, own first chunk
	for i := range 600 {
		cb[quorum.LockCounterKey(fmt.Sprintf("other{z%06d}", i))] = 9
	}
	k := 0
	repairChunkDone = func() {
		if k++; k != 1 {
			return
		}
		c.FlushAll(ctx)
		// B: first chunk only
		repairChunkDone = func() { panic("stop") }
		func() { defer func() { recover() }(); _ = b.Repair(ctx, marker, "", cb, 0) }()
		k2 := 1
		repairChunkDone = func() { k2++ }
		_ = k2
	}
	err := a.Repair(ctx, marker, "", ca, 0)
	repairChunkDone = nil
	mk := c.Get(ctx, quorum.IntactKey).Val()
	miss := review125Missing(t, s, ca)
	t.Logf("A err=%v marker=%q missing=%d of %d", err, mk, miss, len(ca))
	if err == nil && mk != "" && miss > 0 {
		t.Errorf("marked intact by A with %d of its counters missing (marker reused)", miss)
	}
}

// Different markers: A's chunk 1, FLUSHALL, B's complete repair; then A.
func TestReview125FlushThenOther(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	a, b, c := newNode(t, s), newNode(t, s), s.Client()
	ctx := t.Context()
	info, _ := a.Info(ctx)
	ca := review121Counters(1200, 1000)
	cb := review121Counters(1100, 500)
	for at := 1; at <= 2; at++ {
		c.FlushAll(ctx)
		k := 0
		var bErr error
		repairChunkDone = func() {
			if k++; k != at {
				return
			}
			c.FlushAll(ctx)
			saved := repairChunkDone
			repairChunkDone = nil
			bErr = b.Repair(ctx, quorum.NewMarker(info.RunID), "", cb, 0)
			repairChunkDone = saved
		}
		aErr := a.Repair(ctx, quorum.NewMarker(info.RunID), "", ca, 0)
		repairChunkDone = nil
		mk := c.Get(ctx, quorum.IntactKey).Val()
		t.Logf("at %d: A=%v B=%v marker=%q missA=%d missB=%d", at, aErr, bErr, mk, review125Missing(t, s, ca), review125Missing(t, s, cb))
		if aErr == nil {
			t.Errorf("at %d: A succeeded after a flush", at)
		}
		if bErr == nil && review125Missing(t, s, cb) > 0 {
			t.Errorf("at %d: B marked with counters missing", at)
		}
	}
}

// The note expiring between chunks: the repair fails, never marks.
func TestReview125NoteExpires(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	a, c := newNode(t, s), s.Client()
	ctx := t.Context()
	info, _ := a.Info(ctx)
	ca := review121Counters(1200, 1000)
	marker := quorum.NewMarker(info.RunID)
	k := 0
	repairChunkDone = func() {
		if k++; k == 1 {
			if ttl := c.PTTL(ctx, quorum.RepairKey(marker)).Val(); ttl <= 0 || ttl > time.Minute {
				t.Errorf("note ttl %v", ttl)
			}
			c.PExpire(ctx, quorum.RepairKey(marker), time.Millisecond)
			time.Sleep(20 * time.Millisecond)
		}
	}
	err := a.Repair(ctx, marker, "", ca, 0)
	repairChunkDone = nil
	if !errors.Is(err, quorum.ErrMarkerChanged) || c.Get(ctx, quorum.IntactKey).Val() != "" {
		t.Errorf("err %v marker %q", err, c.Get(ctx, quorum.IntactKey).Val())
	}
}

// Concurrent repairs from many nodes with flushes racing them: whenever marked, the marking repair's counters are all there.
func TestReview125ConcurrentFlushRace(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	c := s.Client()
	ctx := t.Context()
	n0 := newNode(t, s)
	info, _ := n0.Info(ctx)
	for round := 0; round < 20; round++ {
		c.FlushAll(ctx)
		sets := []map[string]int64{review121Counters(1200, 1000), review121Counters(1300, 3000), review121Counters(1700, 2000)}
		type res struct {
			i      int
			marker string
			err    error
		}
		ch := make(chan res, len(sets))
		for i, cs := range sets {
			n := newNode(t, s)
			go func() {
				m := quorum.NewMarker(info.RunID)
				ch <- res{i, m, n.Repair(ctx, m, "", cs, 0)}
			}()
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		c.FlushAll(ctx)
		var rs []res
		for range sets {
			rs = append(rs, <-ch)
		}
		mk := c.Get(ctx, quorum.IntactKey).Val()
		if mk == "" {
			continue
		}
		ok := false
		for _, r := range rs {
			if r.marker == mk && r.err == nil && review125Missing(t, s, sets[r.i]) == 0 {
				ok = true
			}
		}
		if !ok {
			t.Errorf("round %d: marked %q but that repair's counters are missing", round, mk)
		}
	}
}
