package quorum

import (
	"testing"
	"time"
)

// TestAcquireBoundReadsBound: a connection-bound lock reads as bound on
// every engine (a second engine stands for another replica), a plain one
// does not, and the mark survives a renewal.
func TestAcquireBoundReadsBound(t *testing.T) {
	_, nodes := fakes(5)
	e, other := newEngine(t, nodes), newEngine(t, nodes)
	ctx := t.Context()
	if _, err := e.AcquireBound(ctx, "b", "v1", 5*time.Second); err != nil {
		t.Fatalf("AcquireBound: %v", err)
	}
	if _, err := e.Acquire(ctx, "p", "v2", 5*time.Second); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	for _, eng := range []*Engine{e, other} {
		if got, err := eng.Read(ctx, "b"); err != nil || !got.Found || !got.Bound() || got.TTL <= 0 {
			t.Fatalf("Read of a bound lock = %+v, %v; want found, Bound, a positive TTL (its lease)", got, err)
		}
		if got, err := eng.Read(ctx, "p"); err != nil || !got.Found || got.Bound() {
			t.Fatalf("Read of a plain lock = %+v, %v; want found, not Bound", got, err)
		}
	}
	if errs := e.Renew(ctx, []Lease{{Key: "b", Value: "v1", TTL: 5 * time.Second}}); errs[0] != nil {
		t.Fatalf("Renew: %v", errs[0])
	}
	if got, err := other.Read(ctx, "b"); err != nil || !got.Bound() {
		t.Fatalf("Read after a renewal = %+v, %v; want Bound", got, err)
	}
	if _, err := other.Acquire(ctx, "b", "v3", 5*time.Second); err == nil {
		t.Fatal("another owner acquired a held bound lock")
	}
}
