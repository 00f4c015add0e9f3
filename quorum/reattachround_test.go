package quorum

import (
	"strings"
	"testing"
	"time"
)

// A re-attach round is one generation past the round it moves from, then
// ordered by its send time and a random part, so an acquire's round (order
// zero) and every earlier generation's are below it, and of two re-attaches
// of one generation the one that arrived later is the larger.
func TestReattachRoundOrder(t *testing.T) {
	e := &Engine{roundPrefix: "ab"}
	prev := "ab.1@"
	for gen := uint64(1); gen <= 5; gen++ {
		r := e.reattachRound(prev, time.Now())
		o := roundOrder(r)
		if o[0] != gen || o[2] == 0 || !strings.HasSuffix(r, SessionMark) || !roundOrder(prev).before(o) {
			t.Fatalf("re-attach round after %q = %q (order %v); want generation %d, a random part, the session mark, above %v", prev, r, o, gen, roundOrder(prev))
		}
		prev = r
	}
	same := e.reattachRound(prev, time.Now())
	later := e.reattachRound(prev, time.Now().Add(2*time.Millisecond))
	if !RoundBefore(same, later) || RoundBefore(later, same) || !RoundBefore("ab.1@", same) || !(Grant{Round: later}).Moved() || (Grant{Round: "ab.1@"}).Moved() {
		t.Fatalf("of one generation, %q sent first is not below %q", same, later)
	}
	for _, r := range []string{"", "ab.1@", "^x@", "1.2^ab@", "x.1.1^ab@", "1.2.3.4^ab@", "18446744073709551616.1.1^a@"} {
		if o := roundOrder(r); o != (order{}) {
			t.Fatalf("roundOrder(%q) = %v; want zero", r, o)
		}
	}
}
