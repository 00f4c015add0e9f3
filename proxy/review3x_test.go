package proxy

import (
	"testing"
	"time"
)

// TestReview3xRefusalPauseSurvivesWallClockStep: the back-off's end is
// kept as wall-clock UnixNano (refusalBucket.until) and pause() is
// time.Until of it, with no monotonic reading and no cap: a wall clock
// stepped back (NTP, a VM restore) by an hour after a refusal makes every
// connection of that user wait an hour before each read (its lock
// releases and extends among them), although the debt is a second at most.
// Simulated by the until a spend just before a one-hour step back leaves.
func TestReview3xRefusalPauseSurvivesWallClockStep(t *testing.T) {
	b := refusalBudgets{perSec: 100}
	u := &refusalBucket{}
	for range 300 {
		b.spend(u)
	}
	u.until.Store(u.until.Load() + int64(time.Hour)) // the wall clock went back an hour since
	if d := u.pause(); d > time.Second {
		t.Fatalf("pause after a wall-clock step back = %v; want at most the one second of debt", d.Round(time.Second))
	}
}
