package backend

import (
	"context"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// forceDel is a force release on one node: its print, then the delete of
// what printed so (mode "read" or "write": a read-write lock's).
func forceDel(t *testing.T, n *Node, key, mode string) quorum.Reply {
	t.Helper()
	p := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: key, Mode: mode})
	if p.Err != nil {
		t.Fatalf("print of %q: %v", key, p.Err)
	}
	return do(t, n, quorum.Op{Kind: quorum.OpDel, Key: key, Mode: mode, Value: p.Entry.Value})
}

// TestDelOnlyWhatPrintedSo: a force release's delete removes a lock only
// where it still prints as the lock read: a late copy of the delete finds
// the lock taken again since (a string lock with the same value, a hash
// lock of the same owner and holds, a semaphore set up again) and deletes
// nothing, answering -1; the print changes with the expiry of a lock
// extended; nothing there prints "".
func TestDelOnlyWhatPrintedSo(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	rdb := s.Client()
	ctx := context.Background()
	if r := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "none"}); !r.OK || r.Entry.Value != "" || r.Entry.Found {
		t.Fatalf("print of nothing = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "none", Value: "abc"}); r.OK || r.N != 0 {
		t.Fatalf("delete of nothing = %+v; want 0", r)
	}
	takes := map[string]func(){
		"string": func() {
			if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "same", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
				t.Fatalf("SetNX = %+v", r)
			}
		},
		"hash": func() {
			if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "k", Value: "t:1", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
				t.Fatalf("hash acquire = %+v", r)
			}
		},
		"semaphore": func() {
			do(t, n, quorum.Op{Kind: quorum.OpSemaphore, Mode: "init", Key: "k", N: 1})
			if r := do(t, n, quorum.Op{Kind: quorum.OpSemaphore, Mode: "take", Key: "k", Value: "id", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
				t.Fatalf("take = %+v", r)
			}
		},
	}
	for kind, take := range takes {
		take()
		p := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "k"})
		if !p.OK || !p.Entry.Found || len(p.Entry.Value) != 40 {
			t.Fatalf("%s: print = %+v", kind, p)
		}
		if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "k", Value: "0123 " + p.Entry.Value}); !r.OK {
			t.Fatalf("%s: delete of what printed so = %+v", kind, r)
		}
		time.Sleep(2 * time.Millisecond) // the same lock taken again expires a ms later at least
		rdb.Del(ctx, quorum.SemaphoreGoneKey("k"))
		take()
		if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "k", Value: p.Entry.Value}); r.OK || r.N != -1 {
			t.Fatalf("%s: a late copy of the delete, after the lock was taken again = %+v; want -1, nothing deleted", kind, r)
		}
		if rdb.Exists(ctx, "k", quorum.SemaphoreKey("k")).Val() == 0 {
			t.Fatalf("%s: the lock taken again was deleted", kind)
		}
		if r := forceDel(t, n, "k", ""); !r.OK {
			t.Fatalf("%s: force release = %+v", kind, r)
		}
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "e", Value: "v", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	before := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "e"})
	time.Sleep(2 * time.Millisecond)
	if r := do(t, n, quorum.Op{Kind: quorum.OpPExpireIfEq, Key: "e", Value: "v", TTL: 5 * time.Second}); !r.OK {
		t.Fatalf("extend = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "e", Value: before.Entry.Value}); r.N != -1 {
		t.Fatalf("a delete of the lock as it printed before an extend = %+v; want -1", r)
	}
}

// TestDelTombstoneKeepsOnlyItsGenerations: a DEL of a semaphore leaves a
// tombstone of the generations it read: a repair of one of them (sent by
// a read from before the DEL) lands as nothing, a repair of a number set
// again since (another generation) lands, and a repair without a
// generation (an earlier version's) is kept out by any tombstone.
func TestDelTombstoneKeepsOnlyItsGenerations(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	sem := func(mode string, p int64, g string) quorum.Reply {
		return do(t, n, quorum.Op{Kind: quorum.OpSemaphore, Mode: mode, Key: "s", N: p, Round: g})
	}
	if r := sem("init", 2, "g1"); !r.OK || r.Entry.Round != "g1" {
		t.Fatalf("init = %+v", r)
	}
	p := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "s"})
	if !p.Entry.Found || p.Entry.Round != "g1" {
		t.Fatalf("print = %+v; want the semaphore and its generation", p)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "s", Value: p.Entry.Value, Aux: "g0 g1"}); !r.OK {
		t.Fatalf("delete = %+v", r)
	}
	if r := sem("repair", 2, "g1"); r.OK {
		t.Fatalf("a repair of the generation the DEL read = %+v; want nothing set", r)
	}
	if r := sem("repair", 2, ""); r.OK {
		t.Fatalf("a repair without a generation = %+v; want nothing set", r)
	}
	if r := sem("repair", 3, "g2"); !r.OK || r.Pre != 3 || r.Entry.Round != "g2" {
		t.Fatalf("a repair of a number set again since = %+v; want 3 set, of g2", r)
	}
	if r := sem("init", 5, "g3"); r.OK || r.Pre != 3 {
		t.Fatalf("init over a number = %+v; want it kept", r)
	}
}

// doFenced runs op as the engine sends an op that acts on a lock whoever
// holds it (quorum's whoeverHolds): with the lock's print read just before
// (an OpSetXX without IfEq, an OpHashLease that may shorten).
func doFenced(t *testing.T, n *Node, op quorum.Op) quorum.Reply {
	t.Helper()
	if op.Kind == quorum.OpSetXX && op.IfEq == "" || op.Kind == quorum.OpHashLease && op.N != quorum.LeaseMax {
		op.Mark = do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: op.Key}).Entry.Value
	}
	return do(t, n, op)
}

// TestWhoeverHoldsOnlyWhatPrintedSo: an overwrite (SET XX) and a lease
// that may shorten (RedissonMultiLock's PEXPIRE), sent with the prints
// read before the lock passed to another holder, leave the new holder's
// lock as it is.
func TestWhoeverHoldsOnlyWhatPrintedSo(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	rdb := s.Client()
	ctx := context.Background()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "A", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	old := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "k"}).Entry.Value
	forceDel(t, n, "k", "")
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "B", TTL: 5 * time.Second, Round: "r2"}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "A", TTL: time.Second, Round: "r3", Mark: old}); r.OK {
		t.Fatalf("a late overwrite = %+v; want B's lock left alone", r)
	}
	if v := rdb.Get(ctx, "k").Val(); v != "B" {
		t.Fatalf("k = %q after a late overwrite; want B", v)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "C", TTL: time.Second, Round: "r3"}); !r.OK || rdb.Get(ctx, "k").Val() != "C" {
		t.Fatalf("an overwrite of the lock as read = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "h", Value: "t:1", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	old = do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "h"}).Entry.Value
	forceDel(t, n, "h", "")
	time.Sleep(2 * time.Millisecond)
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "h", Value: "t:1", TTL: 5 * time.Second, Round: "r2"}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashLease, Key: "h", TTL: 100 * time.Millisecond, N: quorum.LeaseSet, Mark: old}); r.OK {
		t.Fatalf("a late shortening lease = %+v; want the lock taken again left alone", r)
	}
	if ttl := rdb.PTTL(ctx, "h").Val(); ttl < 4*time.Second {
		t.Fatalf("h's TTL %v after a late shortening lease", ttl)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpHashLease, Key: "h", TTL: 100 * time.Millisecond, N: quorum.LeaseSet}); !r.OK {
		t.Fatalf("a lease of the lock as read = %+v", r)
	}
}

// TestGrantStampTellsASameExpiryLockApart: a hash lock taken again by the
// same owner whose TTL lands on the old lock's expiry millisecond prints
// differently all the same (its grant's stamp names its round), so a late
// delete of the old lock leaves it.
func TestGrantStampTellsASameExpiryLockApart(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	rdb := s.Client()
	ctx := context.Background()
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "h", Value: "o:1", TTL: 5 * time.Second, Round: "r1"}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	at := rdb.Do(ctx, "PEXPIRETIME", "h").Val().(int64)
	old := do(t, n, quorum.Op{Kind: quorum.OpPrint, Key: "h"}).Entry.Value
	forceDel(t, n, "h", "")
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "h", Value: "o:1", TTL: 5 * time.Second, Round: "r2"}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	for _, k := range []string{"h", quorum.GrantStampKey("h")} { // the old lock's expiry, to the millisecond
		rdb.Do(ctx, "PEXPIREAT", k, at)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDel, Key: "h", Value: old}); r.OK || r.N != -1 {
		t.Fatalf("a late delete of the old lock = %+v; want -1, the new lock left", r)
	}
	if rdb.Exists(ctx, "h").Val() != 1 {
		t.Fatal("the new lock was deleted")
	}
}
