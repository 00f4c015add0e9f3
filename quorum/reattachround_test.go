package quorum

import (
	"strings"
	"testing"
	"time"
)

// A re-attach round is one generation past the round it moves from,
// ordered by its request's arrival first, then generation, then a random
// part: an acquire's round (order zero) is below every one, a later
// generation of the same arrival is above, and of two re-attaches the one
// that arrived later is the larger, whatever round each read.
func TestReattachRoundOrder(t *testing.T) {
	e := &Engine{roundPrefix: "ab"}
	prev := "ab.1@"
	for gen := uint64(1); gen <= 5; gen++ {
		r := e.reattachRound(prev, time.Now())
		o := roundOrder(r)
		if o[1] != gen || o[2] == 0 || !strings.HasSuffix(r, SessionMark) || !roundOrder(prev).before(o) {
			t.Fatalf("re-attach round after %q = %q (order %v); want generation %d, a random part, the session mark, above %v", prev, r, o, gen, roundOrder(prev))
		}
		prev = r
	}
	same := e.reattachRound(prev, time.Now())
	later := e.reattachRound("ab.1@", time.Now().Add(2*time.Millisecond)) // an earlier generation, arrived later
	if !RoundBefore(same, later) || RoundBefore(later, same) || !RoundBefore("ab.1@", same) || !(Grant{Round: later}).Moved() || (Grant{Round: "ab.1@"}).Moved() {
		t.Fatalf("of one generation, %q sent first is not below %q", same, later)
	}
	for _, r := range []string{"", "ab.1@", "^x@", "1.2^ab@", "x.1.1^ab@", "1.2.3.4^ab@", "18446744073709551616.1.1^a@"} {
		if o := roundOrder(r); o != (order{}) {
			t.Fatalf("roundOrder(%q) = %v; want zero", r, o)
		}
	}
}
