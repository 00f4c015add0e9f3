package proxy

import (
	"testing"
	"time"
)

func TestRefusalBudget(t *testing.T) {
	b := refusalBudgets{perSec: 100}
	u := &refusalBucket{}
	if d := u.pause(); d != 0 {
		t.Fatalf("a fresh budget pauses %v; want 0", d)
	}
	for range 100 { // a second's worth: the burst
		b.spend(u)
	}
	if d := u.pause(); d > 20*time.Millisecond {
		t.Fatalf("within the burst a connection pauses %v; want about 0", d)
	}
	for range 1000 { // far past it: the debt stops at a second
		b.spend(u)
	}
	if d := u.pause(); d < 900*time.Millisecond || d > time.Second {
		t.Fatalf("past the budget a connection pauses %v; want a second at most, and about that", d)
	}
	off := refusalBudgets{}
	v := &refusalBucket{}
	for range 1000 {
		off.spend(v)
	}
	if d := v.pause(); d != 0 {
		t.Fatalf("limit_refusals_per_user 0 pauses %v; want no back-off", d)
	}
}
