package quorum

import (
	"context"
	"testing"
	"time"
)

// review111: a per-key fencing counter (Redisson RFencedLock's
// redisson_lock_token:{x}) raised only on nodes 0-2 (3 and 4 were down for
// those grants) is lost when 0-2 restart empty. Intact are 3 and 4 only
// (< N-Q+1 = 3), so 7763623's reseed marks 0-2 once they vote again, with
// counters the max of what answering nodes have: the shared TokenKey is
// raised to the clock's seed, but the per-key counter comes back as 0
// (3 and 4 never had it). The next RFencedLock grant repeats token 1 after
// 2 was given: README promises these tokens "strictly increase across
// backend restarts ... or are refused with NOQUORUM" (before 7763623 they
// were refused: too few intact nodes to repair from).
func TestReview111ReseedLowersPerKeyCounter(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns, WithMaxTTL(300*time.Millisecond), WithNodeTimeout(100*time.Millisecond), WithHealthInterval(10*time.Millisecond))
	review106Steady(t, e)
	ctx := context.Background()
	const tok = "redisson_lock_token:{f}"
	for _, f := range fs[3:] {
		f.setFault(errRefused, 0, nil)
	}
	var last int64
	for _, owner := range []string{"a:1", "b:1"} {
		g, err := e.AcquireHash(ctx, "{f}", owner, 250*time.Millisecond, tok)
		if err != nil {
			t.Fatal(err)
		}
		last = g.Token
		if _, err := e.ReleaseHash(ctx, "{f}", owner, 250*time.Millisecond, "", 0, false); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("tokens given with nodes 3,4 down: last %d; counters %d %d %d %d %d", last,
		fs[0].counter(LockCounterKey(tok)), fs[1].counter(LockCounterKey(tok)), fs[2].counter(LockCounterKey(tok)), fs[3].counter(LockCounterKey(tok)), fs[4].counter(LockCounterKey(tok)))
	for _, f := range fs[3:] {
		f.setFault(nil, 0, nil)
	}
	for _, f := range fs[:3] {
		f.restart(false) // a majority restarts empty (power loss of 3 of 5)
	}
	time.Sleep(4 * e.QuarantineWindow())
	review106Steady(t, e) // marked again by reseed
	g, err := e.AcquireHash(ctx, "{f}", "c:1", 250*time.Millisecond, tok)
	t.Logf("after the majority restart and reseed: token %d, err %v (TokenKey on node 0: %d)", g.Token, err, fs[0].counter(TokenKey))
	if err == nil && g.Token <= last {
		t.Errorf("RFencedLock token went from %d to %d across a majority restart: reseed raised only TokenKey to the clock's seed, per-key counters came back from nodes that never had them", last, g.Token)
	}
}
