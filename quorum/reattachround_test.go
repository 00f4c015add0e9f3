package quorum

import (
	"strings"
	"testing"
)

// A re-attach round is one generation past the round it moves from, its
// low part random and never zero, so an acquire's round (order 0) and every
// earlier generation's are below it, and two re-attaches of one generation
// are ordered by their low parts.
func TestReattachRoundOrder(t *testing.T) {
	e := &Engine{roundPrefix: "ab"}
	seen := map[uint64]bool{}
	prev := "ab.1@"
	for gen := uint64(1); gen <= 50; gen++ {
		r := e.reattachRound(prev)
		o := roundOrder(r)
		if o>>orderBits != gen || o&(1<<orderBits-1) == 0 || !strings.HasSuffix(r, SessionMark) {
			t.Fatalf("re-attach round after %q = %q (order %d); want generation %d, a non-zero low part, the session mark", prev, r, o, gen)
		}
		if o <= roundOrder(prev) {
			t.Fatalf("round %q (order %d) not after %q (order %d)", r, o, prev, roundOrder(prev))
		}
		seen[o&(1<<orderBits-1)] = true
		prev = r
	}
	if len(seen) < 40 {
		t.Fatalf("low parts drew %d distinct values of 50", len(seen))
	}
	for _, r := range []string{"", "ab.1@", "^x@", "x^ab@", "18446744073709551616^a@"} {
		if o := roundOrder(r); o != 0 {
			t.Fatalf("roundOrder(%q) = %d; want 0", r, o)
		}
	}
}
