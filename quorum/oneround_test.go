package quorum

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// A fenced grant whose Q intact holders counted up to its token in their
// acquires needs no raise (oneRound): here every raise is refused, so
// only the acquire round can give the grant, and the token is the
// counter its holders share, above the one before.
func TestFencedGrantInOneRound(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	ctx := context.Background()
	// The first grant wins nodes 0-2 only: a fake runs each op on its own
	// goroutine, so a straggling acquire could land after the grant's
	// confirmation (a real node's link keeps their order) and count once
	// more there.
	for _, f := range fs[3:] {
		f.setOpFault("setnx", errRefused, nil)
	}
	first, err := e.AcquireFenced(ctx, "one", "a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first grant's acquires refused on nodes 3 and 4", func() bool {
		return fs[3].callCount("setnx") == 1 && fs[4].callCount("setnx") == 1
	})
	for _, f := range fs[3:] {
		f.setOpFault("setnx", nil, nil)
	}
	// Its confirmation raised nodes 3 and 4 to its token too: the next
	// grant's holders then count up to one token, wherever it wins.
	waitFor(t, "the confirmation on every node", func() bool {
		for _, f := range fs {
			if f.counter(TokenKey) != first.Token {
				return false
			}
		}
		return true
	})
	if err := e.Release(ctx, "one", "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the release on every node", func() bool {
		for _, f := range fs {
			if _, held := f.get("one"); held {
				return false
			}
		}
		return true
	})
	for _, f := range fs {
		f.setOpFault("raise", errors.New("raise refused"), nil)
	}
	before := fs[0].callCount("raise")
	g, err := e.AcquireFenced(ctx, "one", "b", 10*time.Second)
	if err != nil || g.Token <= first.Token {
		t.Fatalf("grant = %+v, %v; want one round's grant with a token above %d", g, err, first.Token)
	}
	if n := fs[0].callCount("first raise"); n != 0 {
		t.Fatalf("node 0 saw %d first raises; want none (both grants' holders counted to their tokens)", n)
	}
	if grants, raised := e.FencedGrants(); grants != 2 || raised != 0 {
		t.Fatalf("FencedGrants = %d, %d raised; want 2, none raised", grants, raised)
	}
	// The one raise a node sees is the grant's unawaited confirmation.
	waitFor(t, "the confirmation", func() bool { return fs[0].callCount("raise") > before })
	if n := fs[0].callCount("raise") - before; n > 3 {
		t.Fatalf("node 0 saw %d raises; want only the confirmation (sent up to 3 times)", n)
	}
}

// Where the holders' counters differ (other keys' grants counted on node
// 0), the largest is on fewer than Q of them and the grant must raise:
// without the raise, the next owner, granted on nodes 1, 2 and 3, would
// count from their lower counters to a token below this one's.
func TestFencedGrantRaisesWhereItsHoldersCountersDiffer(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	ctx := context.Background()
	waitFor(t, "the counters seeded", func() bool { return fs[0].counter(TokenKey) > 0 })
	fs[0].put(TokenKey, strconv.FormatInt(fs[0].counter(TokenKey)+100, 10), time.Hour)
	for _, f := range fs[3:] {
		f.setOpFault("setnx", errRefused, nil) // the first grant wins 0, 1 and 2
	}
	g1, err := e.AcquireFenced(ctx, "differ", "a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first grant's acquires refused on nodes 3 and 4", func() bool {
		return fs[3].callCount("setnx") == 1 && fs[4].callCount("setnx") == 1
	})
	for _, f := range fs[:3] {
		if f.callCount("first raise") == 0 {
			t.Fatalf("%s: the grant did not raise its holders' counters to its token", f.name)
		}
	}
	if grants, raised := e.FencedGrants(); grants != 1 || raised != 1 {
		t.Fatalf("FencedGrants = %d, %d raised; want 1, raised", grants, raised)
	}
	if err := e.Release(ctx, "differ", "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the release on nodes 0-2", func() bool {
		for _, f := range fs[:3] {
			if _, held := f.get("differ"); held {
				return false
			}
		}
		return true
	})
	fs[3].setOpFault("setnx", nil, nil)
	fs[0].setOpFault("setnx", errRefused, nil) // the next owner wins 1, 2 and 3
	g2, err := e.AcquireFenced(ctx, "differ", "b", 10*time.Second)
	if err != nil || g2.Token <= g1.Token {
		t.Fatalf("next grant = %+v, %v; want a token above %d", g2, err, g1.Token)
	}
}
