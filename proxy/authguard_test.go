package proxy

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
)

func TestAuthGuard(t *testing.T) {
	var g authGuard
	now := time.Now()
	var pauses []time.Duration
	logged := 0
	for i := 1; i <= 12; i++ {
		pause, logIt, _ := g.failed("10.0.0.1", i, now)
		pauses = append(pauses, pause)
		if logIt {
			logged++
		}
	}
	want := []time.Duration{10, 20, 40, 80, 160, 320, 640, 1280}
	for i, w := range want {
		if pauses[i] != w*time.Millisecond {
			t.Fatalf("pause after failure %d = %v, want %v", i+1, pauses[i], w*time.Millisecond)
		}
	}
	if pauses[11] != authPauseMax {
		t.Fatalf("pause after 12 failures = %v, want %v", pauses[11], authPauseMax)
	}
	if logged != 1 {
		t.Fatalf("12 failures within a second logged %d times, want once", logged)
	}
	// Past ten failures from an address, a fresh connection from it pays the
	// longest pause at once; another address does not.
	if pause, _, _ := g.failed("10.0.0.1", 1, now); pause != authPauseMax {
		t.Fatalf("a new connection from a guessing address pauses %v, want %v", pause, authPauseMax)
	}
	if pause, _, _ := g.failed("10.0.0.2", 1, now); pause != authPauseFirst {
		t.Fatalf("another address pauses %v, want %v", pause, authPauseFirst)
	}
	for i := range 2 * authMaxAddrs {
		g.failed(fmt.Sprint("host", i), 1, now)
	}
	if n := len(g.addrs); n > authMaxAddrs {
		t.Fatalf("the guard remembers %d addresses, more than %d", n, authMaxAddrs)
	}
}

func TestPanicLogIsRateLimited(t *testing.T) {
	var panics panicCounter
	s := &Server{opts: options{logger: slog.New(&panics)}}
	for range 100 {
		s.logPanic("command panicked", "boom")
	}
	if n := panics.n.Load(); n != 1 {
		t.Fatalf("100 panics logged %d lines, want 1 (then one per %v)", n, panicLogEvery)
	}
	if q := s.panicsQuiet.Load(); q != 99 {
		t.Fatalf("%d panics counted as not logged, want 99", q)
	}
}
