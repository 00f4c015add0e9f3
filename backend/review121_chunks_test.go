package backend

import (
	"errors"
	"fmt"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func review121Counters(n int, base int64) map[string]int64 {
	counters := map[string]int64{}
	if n == 0 {
		return counters
	}
	counters[quorum.TokenKey] = base
	for i := range n - 1 {
		counters[quorum.LockCounterKey(fmt.Sprintf("redisson_lock_token:{k%06d}", i))] = base + int64(i)
	}
	return counters
}

// Boundaries of chunking: every counter there, marked, no note left.
func TestReview121Boundaries(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n, c := newNode(t, s), s.Client()
	ctx := t.Context()
	info, _ := n.Info(ctx)
	for _, size := range []int{0, 1, 499, 500, 501, 999, 1000, 1001, 1500} {
		c.FlushAll(ctx)
		counters := review121Counters(size, 7000)
		chunks := 0
		repairChunkDone = func() { chunks++ }
		err := n.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0)
		repairChunkDone = nil
		if err != nil {
			t.Fatalf("%d: %v", size, err)
		}
		if want := max(1, (size+499)/500); chunks != want {
			t.Errorf("%d: %d chunks; want %d", size, chunks, want)
		}
		if c.Get(ctx, quorum.IntactKey).Val() == "" {
			t.Errorf("%d: not marked", size)
		}
		if len(c.Keys(ctx, quorum.RepairKey("*")).Val()) != 0 {
			t.Errorf("%d: note left", size)
		}
		for k, v := range counters {
			if got, _ := c.Get(ctx, k).Int64(); got != v {
				t.Errorf("%d: %s = %d; want %d", size, k, got, v)
				break
			}
		}
		// flushed after every chunk but the last: never marked
		for flushAfter := 1; flushAfter < chunks; flushAfter++ {
			c.FlushAll(ctx)
			k := 0
			repairChunkDone = func() {
				if k++; k == flushAfter {
					c.FlushAll(ctx)
				}
			}
			err := n.Repair(ctx, quorum.NewMarker(info.RunID), "", counters, 0)
			repairChunkDone = nil
			if !errors.Is(err, quorum.ErrMarkerChanged) || c.Get(ctx, quorum.IntactKey).Val() != "" {
				t.Errorf("%d flushed after %d: %v marker %q", size, flushAfter, err, c.Get(ctx, quorum.IntactKey).Val())
			}
		}
	}
}

// Two replicas' repairs interleaved with flushes at every point: whenever the
// backend ends marked, every counter of the repair that marked it is there.
func TestReview121InterleavedFlush(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	a, b, c := newNode(t, s), newNode(t, s), s.Client()
	ctx := t.Context()
	info, _ := a.Info(ctx)
	ca := review121Counters(1200, 1000)
	cb := review121Counters(1300, 2000) // different boundaries
	type ev struct {
		at   int
		what string
	}
	// Events injected after A's chunk number at (1..3): "B" = B's whole repair, "F" = flush, "B1" = B's first chunk only then flush
	scen := [][]ev{
		{{1, "F"}, {1, "B"}},
		{{1, "B"}, {2, "F"}},
		{{1, "F"}, {2, "B"}},
		{{2, "B"}},
		{{1, "B"}},
		{{1, "Bpart"}, {1, "F"}},
		{{1, "F"}, {1, "Bpart"}},
		{{1, "Bpart"}},
		{{2, "Bpart"}, {2, "F"}},
	}
	for si, sc := range scen {
		c.FlushAll(ctx)
		k := 0
		var bErr error
		var bMarked bool
		repairChunkDone = func() {
			k++
			for _, e := range sc {
				if e.at != k {
					continue
				}
				switch e.what {
				case "F":
					c.FlushAll(ctx)
				case "B":
					saved := repairChunkDone
					repairChunkDone = nil
					bErr = b.Repair(ctx, quorum.NewMarker(info.RunID), "", cb, 0)
					bMarked = bErr == nil
					repairChunkDone = saved
				case "Bpart":
					saved := repairChunkDone
					j := 0
					repairChunkDone = func() {
						if j++; j == 1 {
							panic("stop")
						}
					}
					func() {
						defer func() { recover() }()
						_ = b.Repair(ctx, quorum.NewMarker(info.RunID), "", cb, 0)
					}()
					repairChunkDone = saved
				}
			}
		}
		aErr := a.Repair(ctx, quorum.NewMarker(info.RunID), "", ca, 0)
		repairChunkDone = nil
		marker := c.Get(ctx, quorum.IntactKey).Val()
		t.Logf("scenario %d: A=%v B=%v marker=%q", si, aErr, bErr, marker)
		if marker == "" {
			continue
		}
		var want []map[string]int64
		if aErr == nil {
			want = append(want, ca)
		}
		if bMarked {
			want = append(want, cb)
		}
		if len(want) == 0 {
			t.Errorf("scenario %d: marked but no repair succeeded", si)
		}
		// the successful repair that wrote the marker must have its counters
		ok := false
		for _, w := range want {
			all := true
			for key, v := range w {
				if got, _ := c.Get(ctx, key).Int64(); got < v {
					all = false
					break
				}
			}
			ok = ok || all
		}
		if !ok {
			t.Errorf("scenario %d: marked %q with counters missing", si, marker)
		}
	}
}
