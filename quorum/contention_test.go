package quorum

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// WithContention hears the key of every acquire round that found the lock
// taken (plain and hash locks), and nothing else.
func TestWithContentionReportsTakenAcquires(t *testing.T) {
	_, nodes := fakes(3)
	var mu sync.Mutex
	var heard []string
	e := newEngine(t, nodes, WithContention(func(key string) {
		mu.Lock()
		heard = append(heard, key)
		mu.Unlock()
	}))
	ctx := t.Context()
	if _, err := e.Acquire(ctx, "k", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Acquire(ctx, "k", "b", time.Minute); !errors.Is(err, ErrTaken) {
		t.Fatalf("second Acquire = %v; want ErrTaken", err)
	}
	if _, err := e.AcquireHash(ctx, "h", "a", time.Minute, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AcquireHash(ctx, "h", "b", time.Minute, ""); !errors.Is(err, ErrTaken) {
		t.Fatalf("second AcquireHash = %v; want ErrTaken", err)
	}
	if _, err := e.Acquire(ctx, "free", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(heard, []string{"k", "h"}) {
		t.Fatalf("contention heard %v; want [k h]", heard)
	}
}
