package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A fenced grant's token must be larger than every earlier grant's, also
// when the earlier grant's raise reaches a node only after this grant's own
// INCR there. Here grant 1 wins on nodes 0-2 (counters 5, 10, 10: token 11)
// and its raise to 11 is held on node 3 while grant 2 INCRs nodes 3 and 4
// (to 1 each); node 3 then takes the raise, grant 1 is granted and released,
// and grant 2 wins node 0 (counter 6 -> 7). Grant 2's own INCRs give 7: a
// raise that only raises would hand out 7 after 11. Its raise finds nodes
// already at 11 and must issue 12.
func TestFencedTokenAboveARaiseThatLandedLate(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns, WithNodeTimeout(5*time.Second), WithTimeoutFactor(0.9))
	ctx := context.Background()
	tok := LockCounterKey("tok")
	fs[0].put(tok, "5", time.Hour)
	fs[1].put(tok, "10", time.Hour)
	fs[2].put(tok, "10", time.Hour)
	for _, f := range fs[3:] {
		f.put(TokenKey, "0", time.Hour) // where the lock's counter starts on nodes 3 and 4
	}
	for _, f := range fs[3:] {
		f.setOpFault("hashacquire", errRefused, nil) // grant 1 wins nodes 0-2 only
	}
	fs[0].setOpFault("raise", errRefused, nil)
	fs[4].setOpFault("raise", errRefused, nil)
	raise3 := make(chan struct{})
	fs[3].setOpFault("raise", nil, raise3)

	var (
		wg     sync.WaitGroup
		g1, g2 Grant
		e1, e2 error
	)
	wg.Go(func() { g1, e1 = e.AcquireHash(ctx, "{f}", "a:1", 3*time.Second, "tok") })
	waitFor(t, "grant 1's raise to reach node 3", func() bool { return fs[3].callCount("raise") == 1 })

	for _, f := range fs[3:] {
		f.setOpFault("hashacquire", nil, nil)
	}
	acquire0 := make(chan struct{})
	fs[0].setOpFault("hashacquire", nil, acquire0) // grant 2 reaches node 0 once grant 1 is gone
	var wg2 sync.WaitGroup
	wg2.Go(func() { g2, e2 = e.AcquireHash(ctx, "{f}", "b:1", 3*time.Second, "tok") })
	waitFor(t, "grant 2's INCR on nodes 3 and 4", func() bool { return fs[3].counter(tok) == 1 && fs[4].counter(tok) == 1 })

	close(raise3)
	wg.Wait()
	if e1 != nil || g1.Token != 11 {
		t.Fatalf("grant 1 = %+v, %v; want token 11", g1, e1)
	}
	if _, err := e.ReleaseHash(ctx, "{f}", "a:1", 3*time.Second, "", 0, false); err != nil {
		t.Fatal(err)
	}
	close(acquire0)
	wg2.Wait()
	if e2 != nil || g2.Token <= g1.Token {
		t.Fatalf("grant 2 = %+v, %v; want a token above grant 1's %d", g2, e2, g1.Token)
	}
	if n, err := e.ReadCounter(ctx, "tok"); err != nil || n < g2.Token {
		t.Fatalf("ReadCounter = %d, %v; want at least grant 2's token %d", n, err, g2.Token)
	}
}

// waitFor polls cond for up to 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 5s: %s", what)
		}
	}
}

// Fenced string locks: every grant's token is larger than every earlier
// one, across keys and owners and with a node down; the token is noted
// beside the lock (TokenOf reads it, an extend keeps it).
func TestAcquireFencedTokens(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	ctx := context.Background()
	fs[1].put(TokenKey, "40", time.Hour) // counters that differ across nodes
	var last int64
	for i, key := range []string{"a", "b", "a", "c", "a"} {
		if i == 2 {
			fs[1].setFault(errRefused, 0, nil) // the node that was ahead is gone
		}
		owner := fmt.Sprint("owner-", i)
		g, err := e.AcquireFenced(ctx, key, owner, 10*time.Second)
		if err != nil || g.Token <= last {
			t.Fatalf("grant %d (%s) = %+v, %v; want a token above %d", i, key, g, err, last)
		}
		last = g.Token
		if _, err := e.Extend(ctx, key, owner, 20*time.Second); err != nil {
			t.Fatal(err)
		}
		if en, err := e.TokenOf(ctx, key); err != nil || !en.Found || en.Value != owner || en.Token != g.Token {
			t.Fatalf("Token(%s) = %+v, %v; want %s holding token %d", key, en, err, owner, g.Token)
		}
		if err := e.Release(ctx, key, owner); err != nil {
			t.Fatal(err)
		}
		// Release answers once a quorum deleted the lock; a fake node runs
		// each op on its own goroutine (a real one keeps its connection's
		// order), so a straggling delete could land after the next acquire
		// of the key and that node answer "taken" (1 run in ~150 failed so).
		waitFor(t, "the release on every live node", func() bool {
			for j, f := range fs {
				if _, held := f.get(key); held && !(j == 1 && i >= 2) {
					return false
				}
			}
			return true
		})
	}
}

// Locks taken without a token (Acquire) get one at their first read, above
// every token before, fenced or fixed; it sticks; the next owner's is
// larger; a lock about to expire gets none.
func TestTokenFixedOnFirstRead(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	ctx := context.Background()
	g, err := e.AcquireFenced(ctx, "fenced", "f", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	last := g.Token
	fs[4].setFault(errRefused, 0, nil) // a node down throughout
	for i, owner := range []string{"a", "b", "c"} {
		if _, err := e.Acquire(ctx, "plain", owner, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		en, err := e.TokenOf(ctx, "plain")
		if err != nil || en.Value != owner || en.Token <= last {
			t.Fatalf("read %d: %+v, %v; want %s's lock with a token above %d", i, en, err, owner, last)
		}
		if again, err := e.TokenOf(ctx, "plain"); err != nil || again.Token != en.Token {
			t.Fatalf("second read = %+v, %v; want the same token %d", again, err, en.Token)
		}
		last = en.Token
		if err := e.Release(ctx, "plain", owner); err != nil {
			t.Fatal(err)
		}
	}
	if g, err := e.AcquireFenced(ctx, "fenced2", "f", 10*time.Second); err != nil || g.Token <= last {
		t.Fatalf("a fenced grant after fixed tokens = %+v, %v; want a token above %d", g, err, last)
	}
	// A fix that cannot end before the lock could expire on a holder, as
	// its read found it, gives no token: a later owner could be granted
	// first. The counters answer only after that moment; the lock is then
	// found held again (its holder extended it), so that only the deadline
	// can refuse the fix.
	gate := make(chan struct{})
	for _, f := range fs[:4] {
		f.put("short", "s", 100*time.Millisecond)
		f.setOpFault("fixtoken", nil, gate) // the counters are read with the fixed tokens
	}
	time.AfterFunc(150*time.Millisecond, func() {
		for _, f := range fs[:4] {
			f.put("short", "s", 10*time.Second)
		}
		close(gate)
	})
	if en, err := e.TokenOf(ctx, "short"); !errors.Is(err, ErrValiditySpent) && !errors.Is(err, ErrNoQuorum) || en.Token > 0 {
		t.Fatalf("a fix past the lock's end = %+v, %v; want no token", en, err)
	}
}

// Fenced grants of many keys at once share one counter: each raises it and
// is raised past by the others. A grant outbids them once, then makes its
// token stick; chasing them (as a first version did) did not end under
// load. 64 concurrent grants must each get a token in a few rounds. (A
// node timeout the race detector on a busy machine cannot run out: 64
// rounds at once may wait for a CPU longer than the 250ms default, and a
// timeout is not what this test is about; the raise count is.)
func TestConcurrentFencedGrantsEnd(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns, WithNodeTimeout(5*time.Second), WithTimeoutFactor(0.9))
	for i, f := range fs {
		f.setFault(nil, time.Duration(i)*time.Millisecond, nil) // answers interleave, as on a network
	}
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = e.AcquireFenced(context.Background(), fmt.Sprint("k", i), "o", 10*time.Second)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("grant %d: %v", i, err)
		}
	}
	if n := fs[0].callCount("raise"); n > 2*len(errs) {
		t.Errorf("%d raises reached node 0 for %d grants; want at most two rounds each", n, len(errs))
	}
}
