package quorum

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// Same value, another lock (review of issue 23's fixes): owner A's fenced
// lock "v" is released on nodes 0 and 1 while node 2 is cut off, so A's
// lock, with A's token, stays on node 2 until it expires. Owner B then
// takes the key with a plain SET NX PX and the same value (libraries that
// write a constant value do) on nodes 0 and 1, and reads its first token
// while node 2 is still away: fixed on 0 and 1, above A's. Node 2 comes
// back. B's lock is the same lock; its token must stay the one answered,
// never A's older token read from node 2's stale copy.
// staleFencedCopy sets up both tests: A's fenced lock "v" released while
// node 2 is cut off (node 2 keeps A's copy, and stays cut off), then B's
// plain lock with the same value on nodes 0 and 1.
func staleFencedCopy(t *testing.T) ([]*fakeNode, *Engine, Grant) {
	t.Helper()
	fs, ns := fakes(3)
	e := newEngine(t, ns)
	ctx := context.Background()
	a, err := e.AcquireFenced(ctx, "reuse", "v", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "A's lock on every node", func() bool { return holders(fs, "reuse", "v") == 3 })
	fs[2].setFault(errRefused, 0, nil)
	if err := e.Release(ctx, "reuse", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Acquire(ctx, "reuse", "v", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return fs, e, a
}

func TestSameValueStaleFencedCopyKeepsNewLocksToken(t *testing.T) {
	fs, e, a := staleFencedCopy(t)
	ctx := context.Background()
	first, err := e.TokenOf(ctx, "reuse")
	if err != nil || first.Token <= a.Token {
		t.Fatalf("B's first token = %+v, %v; want one above A's %d", first, err, a.Token)
	}
	fs[2].setFault(nil, 0, nil) // node 2 back, still holding A's lock
	for range 3 {
		again, err := e.TokenOf(ctx, "reuse")
		if err == nil && again.Token != first.Token {
			t.Fatalf("B's token read again = %d (A's was %d); want B's first answer %d: one lock, one token", again.Token, a.Token, first.Token)
		}
	}
}

// The same with B's token not read before node 2 is back: B's first
// token must be above A's (A's lock, released, gave A's token), never
// A's token read from node 2's stale copy.
func TestSameValueStaleFencedCopyFirstToken(t *testing.T) {
	fs, e, a := staleFencedCopy(t)
	ctx := context.Background()
	fs[2].setFault(nil, 0, nil)
	got, err := e.TokenOf(ctx, "reuse")
	if err == nil && got.Token != 0 && got.Token <= a.Token {
		t.Fatalf("B's first token = %d; A's released lock had %d: a new lock's token must be above", got.Token, a.Token)
	}
}

// A fenced session lock restored on two of its five nodes (each lost it and
// a renewal set it again). Noted "no token yet" (the renewal's holders did
// not agree on one), they leave the one original holder's token unproven:
// one holder may keep a stale token (a raise that missed it), so none is
// answered rather than a token the lock may not keep. Noted with the token
// Q holders agreed on (as Renew's restore writes it), they answer it.
func TestRestoredHoldersKeepTheFencedToken(t *testing.T) {
	fs, ns := fakes(5)
	// The confirmation fails on nodes 3 and 4, whose counters are behind
	// (other keys' grants counted on 0, 1 and 2): their copies keep their
	// own counters tentative, no token of the lock's. Nodes 0, 1 and 2
	// counted to the token: the grant needs no raise (oneRound).
	// Their acquires are held until the grant is decided on 0, 1 and 2:
	// decided on the first three answers, it would raise when 3 or 4 came
	// among them, and fail (their raises are lost).
	late := make(chan struct{})
	for _, f := range fs[3:] {
		f.setOpFault("raise", errors.New("raise lost"), nil)
		f.setOpFault("setnx", nil, late)
	}
	e := newEngine(t, ns)
	ctx := context.Background()
	for _, f := range fs[:3] {
		f.put(TokenKey, strconv.FormatInt(fs[3].counter(TokenKey)+100, 10), time.Hour)
	}
	g, err := e.AcquireFenced(ctx, "restored", "s", 30*time.Second)
	close(late)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lock on nodes 3 and 4", func() bool {
		_, on3 := fs[3].get("restored")
		_, on4 := fs[4].get("restored")
		return on3 && on4
	})
	// The grant's confirmation of its token landed on 0, 1 and 2 (it is
	// sent again only to 3 and 4, where every raise fails).
	for _, f := range fs[:3] {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			f.mu.Lock()
			final := !f.data["restored"].tentative
			f.mu.Unlock()
			if final {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the confirmation never landed", f.name)
			}
		}
	}
	// Node 0 keeps its copy; 1 and 2 lost theirs and were restored.
	restore := func(token int64) {
		for _, f := range fs[1:3] {
			f.mu.Lock()
			l := f.data["restored"]
			l.token, l.note = token, NoteFenced
			f.data["restored"] = l
			f.mu.Unlock()
		}
	}
	restore(0)
	if en, err := e.TokenOf(ctx, "restored"); err != nil || en.Token != 0 {
		t.Fatalf("TokenOf = %+v, %v; want no token (one holder's is unproven)", en, err)
	}
	restore(g.Token)
	if en, err := e.TokenOf(ctx, "restored"); err != nil || en.Token != g.Token {
		t.Fatalf("TokenOf = %+v, %v; want the lock's token %d", en, err, g.Token)
	}
}

// A fenced session lock whose grant's confirmation reached only node 0
// (1 notes the token tentative, 2 its own lower counter: it was behind):
// node 0 alone notes it final, one fault from no readable token. The
// renewal carries the token the grant answered (Lease.Granted) and makes
// it final where the lease's round notes a token tentative, whichever
// (review104: a holder behind kept its own counter for good); a lease
// with no token, or of another round, confirms nothing.
func TestRenewalConfirmsTheGrantedToken(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns)
	ctx := context.Background()
	// Node 2 answers after the grant is decided on 0 and 1: the
	// confirmation goes to 0 and 1 only (a round decided on its first two
	// answers would leave whichever came third unconfirmed).
	late := make(chan struct{})
	fs[2].setOpFault("setnx", nil, late)
	g, err := e.AcquireFenced(ctx, "granted", "s", 30*time.Second)
	fs[2].setOpFault("setnx", nil, nil)
	close(late)
	if err != nil {
		t.Fatal(err)
	}
	tentative := func(f *fakeNode) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.data["granted"].tentative
	}
	waitFor(t, "the confirmation on 0 and 1, the lock on 2", func() bool {
		_, on0 := fs[0].get("granted")
		_, on1 := fs[1].get("granted")
		_, on2 := fs[2].get("granted")
		return on0 && on1 && on2 && !tentative(fs[0]) && !tentative(fs[1])
	})
	fs[2].mu.Lock()
	l := fs[2].data["granted"]
	l.tentative, l.token = true, g.Token // behind: its own counter, set below
	fs[2].data["granted"] = l
	fs[2].mu.Unlock()
	for i, f := range fs[1:] { // as if it had not on 1 and 2
		f.mu.Lock()
		l := f.data["granted"]
		l.tentative = true
		if i == 1 {
			l.token -= 5 // node 2's own counter, behind
		}
		f.data["granted"] = l
		f.mu.Unlock()
	}
	lease := Lease{Key: "granted", Value: "s", TTL: 30 * time.Second, Round: g.Round}
	for _, wrong := range []Lease{{Key: lease.Key, Value: lease.Value, TTL: lease.TTL, Round: g.Round},
		{Key: lease.Key, Value: lease.Value, TTL: lease.TTL, Round: "another", Granted: g.Token}} {
		e.Renew(ctx, []Lease{wrong})
		if !tentative(fs[1]) || !tentative(fs[2]) {
			t.Fatalf("a renewal %+v confirmed the lock's tentative token %d", wrong, g.Token)
		}
	}
	lease.Granted = g.Token
	if errs := e.Renew(ctx, []Lease{lease}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if tentative(fs[1]) || tentative(fs[2]) {
		t.Fatal("the renewal carrying the granted token left it tentative")
	}
	fs[0].mu.Lock()
	delete(fs[0].data, "granted") // node 0 lost it: 1 and 2 are Q, final now
	fs[0].mu.Unlock()
	if en, err := e.TokenOf(ctx, "granted"); err != nil || en.Token != g.Token {
		t.Fatalf("TokenOf = %+v, %v; want %d", en, err, g.Token)
	}
}
