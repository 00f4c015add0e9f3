package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestHashLockDelayAgainstRedis (hashnote.lua): a hash lock taken with a
// lock-delay notes it ("#<ms>"), expiring exactly that long after the
// hash through re-entries, extends, leases, a release that leaves holds
// and a repair; a release that deletes it keeps the note marked with its
// id (Noted) for OpUnmark, and a free key is not taken meanwhile; a repair
// that gives the hash back turns the mark into the note again; a rollback
// that deletes the hash takes its note with it, never a release's mark.
func TestHashLockDelayAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const key, owner, delay = "h", "o:1", 2 * time.Second
	meta := quorum.MetaKey(key)
	note := func() string { return c.Get(ctx, meta).Val() }
	lead := func(what string) {
		t.Helper()
		at := c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
		if l := c.Do(ctx, "PEXPIRETIME", meta).Val().(int64) - at; l != delay.Milliseconds() || note() != "#2000" {
			t.Fatalf("after %s: note %q outlives the hash by %d ms; want \"#2000\" by %v", what, note(), l, delay)
		}
	}
	acquire := quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: owner, TTL: 10 * time.Second, Round: "r1", AuxTTL: delay}
	if r := do(t, n, acquire); !r.OK || r.N != 1 {
		t.Fatalf("hash acquire = %+v", r)
	}
	lead("the grant")
	reentry := acquire
	reentry.TTL, reentry.AuxTTL = 20*time.Second, 0
	if r := do(t, n, reentry); !r.OK || r.N != 2 {
		t.Fatalf("re-entry = %+v", r)
	}
	lead("a re-entry without a delay of its own")
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashExtend, Key: key, Value: owner, TTL: 5 * time.Second}); !r.OK {
		t.Fatalf("extend = %+v", r)
	}
	lead("an extend")
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpHashLease, Key: key, TTL: 3 * time.Second, N: quorum.LeaseSet}); !r.OK {
		t.Fatalf("lease = %+v", r)
	}
	lead("a lease")
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: owner, TTL: 7 * time.Second, Mark: "rel1"}); r.Err != nil || r.N != 0 || r.Noted {
		t.Fatalf("release of one of two holds = %+v; want still held, not marked", r)
	}
	lead("a release that leaves a hold")
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: owner, TTL: 7 * time.Second, Mark: "rel2"}); r.Err != nil || r.N != 1 || !r.Noted {
		t.Fatalf("release of the last hold = %+v; want released, marked", r)
	}
	if c.Exists(ctx, key).Val() != 0 || note() != "!rel2#2000" || c.PTTL(ctx, meta).Val() < 8*time.Second {
		t.Fatalf("after the last release: hash exists %d, note %q for %v; want the hash gone, \"!rel2#2000\" with its TTL",
			c.Exists(ctx, key).Val(), note(), c.PTTL(ctx, meta).Val())
	}
	other := quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: "p:1", TTL: time.Second, Round: "r2"}
	if r := do(t, n, other); r.OK {
		t.Fatal("another owner took the hash lock over a release's mark")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: time.Second, Round: "r3", Pad: time.Millisecond}); r.OK {
		t.Fatal("SET NX took the key over a hash lock release's mark")
	}
	// The release answered "still held" (another node had more holds): its
	// repair gives this node its hold back, and the mark is the note again;
	// no other repair sets a free key beside a note (a lock-delay runs).
	for _, mark := range []string{"", "rel1"} {
		if r := do(t, n, quorum.Op{Kind: quorum.OpHashSetHolds, Key: key, Value: owner, N: 1, TTL: 6 * time.Second, Mark: mark}); r.OK || c.Exists(ctx, key).Val() != 0 {
			t.Fatalf("set holds (mark %q) over release rel2's mark = %+v; want refused", mark, r)
		}
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashSetHolds, Key: key, Value: owner, N: 1, TTL: 6 * time.Second, Mark: "rel2"}); !r.OK {
		t.Fatalf("set holds by release rel2 = %+v", r)
	}
	lead("a repair over the release's mark")
	if r := do(t, n, quorum.Op{Kind: quorum.OpUnmark, Key: key, Value: "rel2"}); r.OK {
		t.Fatalf("a late unmark of rel2 = %+v; want the note of the lock held again kept", r)
	}
	lead("a late unmark")
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: owner, TTL: 7 * time.Second, Mark: "rel3"}); !r.Noted {
		t.Fatalf("release = %+v; want marked", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpUnmark, Key: key, Value: "rel3"}); !r.OK || c.Exists(ctx, meta).Val() != 0 {
		t.Fatalf("unmark of rel3 = %+v, note %q; want removed", r, note())
	}
	if r := do(t, n, other); !r.OK {
		t.Fatalf("hash acquire after the unmark = %+v; want granted", r)
	}
	if c.Exists(ctx, meta).Val() != 0 {
		t.Fatalf("a hash lock taken without a lock-delay has a note %q", note())
	}

	// A rollback (one hold, the grant's) deletes the hash and its note; a
	// release's mark beside a free key is never a rollback's to delete.
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "g", Value: owner, TTL: 10 * time.Second, Round: "r4", AuxTTL: delay}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "g", Value: owner, N: 1}); !r.OK || c.Exists(ctx, "g", quorum.MetaKey("g")).Val() != 0 {
		t.Fatalf("rollback = %+v; want the hash and its note deleted", r)
	}
	c.Set(ctx, quorum.MetaKey("g"), "!rel9#2000", 5*time.Second)
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "g", Value: owner, N: 0}); r.OK || c.Get(ctx, quorum.MetaKey("g")).Val() != "!rel9#2000" {
		t.Fatalf("unhold of a free key = %+v; want the mark kept", r)
	}
	// A retry answered from the unlock latch says whether the mark its
	// first attempt left (the same id) is still there.
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "l", Value: owner, TTL: 10 * time.Second, Round: "r6", AuxTTL: delay}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	rel := quorum.Op{Kind: quorum.OpHashRelease, Key: "l", Value: owner, TTL: time.Second, Aux: "latch", AuxTTL: 10 * time.Second, Mark: "Lq"}
	if r := do(t, n, rel); r.N != 1 || r.Pre != 1 || !r.Noted {
		t.Fatalf("release = %+v; want released, marked", r)
	}
	if r := do(t, n, rel); r.N != 1 || r.Pre != -1 || !r.Noted {
		t.Fatalf("its retry = %+v; want released from the latch, its mark there", r)
	}
	other2 := rel
	other2.Mark = "Lz"
	if r := do(t, n, other2); r.N != 1 || r.Pre != -1 || r.Noted {
		t.Fatalf("a retry naming another mark = %+v; want released from the latch, not its mark", r)
	}
	// A retry answered "still held" from the latch says whether the owner
	// holds the lock there now.
	for range 2 {
		if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "s", Value: owner, TTL: 10 * time.Second, Round: "r8"}); !r.OK {
			t.Fatalf("hash acquire = %+v", r)
		}
	}
	still := quorum.Op{Kind: quorum.OpHashRelease, Key: "s", Value: owner, TTL: time.Second, Aux: "latch-s", AuxTTL: 10 * time.Second, Mark: "Ls"}
	if r := do(t, n, still); r.N != 0 || r.Pre != 2 || r.Own || r.Noted {
		t.Fatalf("release of one of two holds = %+v", r)
	}
	if r := do(t, n, still); r.N != 0 || r.Pre != -1 || !r.Own {
		t.Fatalf("its retry = %+v; want still held from the latch, the owner holding it here", r)
	}
	c.Del(ctx, "s")
	if r := do(t, n, still); r.N != 0 || r.Pre != -1 || r.Own {
		t.Fatalf("its retry once the lock is gone = %+v; want still held from the latch, not held here", r)
	}
	// A release that did not delete the lock on a quorum finishes it on
	// the other nodes with its mark: their notes stay, marked.
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "m", Value: owner, TTL: 10 * time.Second, Round: "r7", AuxTTL: delay}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "m", Value: owner, N: 0, Mark: "Lm"}); !r.OK || c.Get(ctx, quorum.MetaKey("m")).Val() != "!Lm#2000" {
		t.Fatalf("marked unhold = %+v, note %q; want deleted, note \"!Lm#2000\"", r, c.Get(ctx, quorum.MetaKey("m")).Val())
	}
	for mark, want := range map[string]bool{"Lm": true, "Lx": false} { // asked again: did that release delete it here?
		if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "m", Value: owner, N: 0, Mark: mark}); r.OK != want {
			t.Fatalf("unhold of the freed lock by release %s = %+v; want OK %v (its mark there)", mark, r, want)
		}
	}
	// A probe (N -1) asks only: it never gives up a hold, and writes nothing.
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "p", Value: owner, TTL: 10 * time.Second, Round: "r9", AuxTTL: delay}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "p", Value: owner, N: -1, Mark: "Lp"}); r.OK || c.HGet(ctx, "p", owner).Val() != "1" || c.Get(ctx, quorum.MetaKey("p")).Val() != "#2000" {
		t.Fatalf("probe of a held lock = %+v; want 0, the hold and its note untouched", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashUnhold, Key: "m", Value: owner, N: -1, Mark: "Lm"}); !r.OK || c.Get(ctx, quorum.MetaKey("m")).Val() != "!Lm#2000" {
		t.Fatalf("probe of release Lm's mark = %+v; want 1, the mark kept", r)
	}
	// Without a mark (the release's id), the note goes with the hash.
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "u", Value: owner, TTL: 10 * time.Second, Round: "r5", AuxTTL: delay}); !r.OK {
		t.Fatalf("hash acquire = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: "u", Value: owner, TTL: time.Second}); r.N != 1 || r.Noted || c.Exists(ctx, quorum.MetaKey("u")).Val() != 0 {
		t.Fatalf("unmarked release = %+v; want released and the note deleted", r)
	}
}
