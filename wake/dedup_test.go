package wake

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// Deduplicating a message must cost the same whatever the number of ids
// remembered (it once scanned them all past 4096: 60k wake-ups took 65 s).
// Measured as a ratio within one run, so a loaded machine moves both sides.
func TestDedupCostDoesNotGrowWithHistory(t *testing.T) {
	cost := func(history int) time.Duration {
		b := New(nil, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
		for i := range history {
			b.first(fmt.Sprint("old", i), "")
		}
		start := time.Now()
		for i := range 2000 {
			b.first(fmt.Sprint("new", i), "")
		}
		return time.Since(start)
	}
	small, large := cost(1000), cost(100000)
	if large > 20*small+20*time.Millisecond {
		t.Fatalf("2000 ids cost %v after 100k remembered, %v after 1k: dedup grows with history", large, small)
	}
}
