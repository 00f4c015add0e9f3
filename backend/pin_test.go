package backend

import (
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestExtendPinAgainstRedis: an extend never shortens a lock a session
// renews (its round's mark), sets a plain lock's TTL as PEXPIRE does, and
// keeps the round; from outside its session (N 1) it pins its promise, and while the
// pin lasts neither the release at a close (a round) nor the rollback of
// the acquire deletes the lock; a release without a round (the holder's
// compare-and-delete) and a force release delete lock and pin together.
func TestExtendPinAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	rdb := s.Client()
	acquire := func(key string) {
		t.Helper()
		if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "me", TTL: 5 * time.Second, Round: "r1@", Pad: 7 * time.Millisecond}); !r.OK {
			t.Fatalf("SetNX %s = %+v", key, r)
		}
	}
	extend := func(key string, ttl time.Duration, round string, pin int64) bool {
		t.Helper()
		r := do(t, n, quorum.Op{Kind: quorum.OpPExpireIfEq, Key: key, Value: "me", TTL: ttl, Pad: 3 * time.Millisecond, Round: round, N: pin})
		if r.Err != nil {
			t.Fatalf("extend %s = %+v", key, r)
		}
		return r.OK
	}

	acquire("k")
	if !extend("k", 300*time.Millisecond, "", 1) {
		t.Fatal("extend of a held lock refused")
	}
	if ttl := rdb.PTTL(ctx, "k").Val(); ttl < 4*time.Second {
		t.Errorf("TTL after an extend to 300 ms = %v; want the 5 s it had (never shortened)", ttl)
	}
	if note := rdb.Get(ctx, quorum.MetaKey("k")).Val(); note != "r1@ 7" {
		t.Errorf("note after the extend = %q; want round r1 kept, with the larger padding of the TTL kept", note)
	}
	if pin := rdb.Get(ctx, quorum.PinKey("k")).Val(); pin != "me" {
		t.Errorf("pin = %q; want the owner", pin)
	}
	if !extend("k", 20*time.Second, "", 1) {
		t.Fatal("second extend refused")
	}
	if ttl := rdb.PTTL(ctx, quorum.PinKey("k")).Val(); ttl < 19*time.Second {
		t.Errorf("pin's TTL after an extend to 20 s = %v", ttl)
	}
	extend("k", time.Second, "", 1)
	if ttl := rdb.PTTL(ctx, quorum.PinKey("k")).Val(); ttl < 19*time.Second {
		t.Errorf("a shorter extend shortened the pin to %v", ttl)
	}
	if extend("k", time.Minute, "r2", 0) {
		t.Error("an extend naming another round extended the lock")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me", Round: "r1@", Fair: true}); r.OK {
		t.Error("the release at the close of the booking connection deleted a pinned lock")
	}
	if note := rdb.Get(ctx, quorum.MetaKey("k")).Val(); !strings.HasPrefix(note, "r1 ") {
		t.Errorf("note after the close left a pinned lock = %q; want round r1 without the session's mark (a timed lock now)", note)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpUndo, Key: "k", Value: "me", Round: "r1@"}); r.OK {
		t.Error("the rollback of the acquire deleted a pinned lock")
	}
	if rdb.Exists(ctx, "k").Val() != 1 {
		t.Fatal("pinned lock gone")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me"}); !r.OK {
		t.Fatalf("the holder's release = %+v", r)
	}
	if rdb.Exists(ctx, "k", quorum.MetaKey("k"), quorum.PinKey("k")).Val() != 0 {
		t.Error("a release left the note or the pin")
	}

	// Without a pin (the booking connection's own extend), the close releases.
	acquire("own")
	if !extend("own", 30*time.Second, "r1@", 0) {
		t.Fatal("own extend refused")
	}
	if rdb.Exists(ctx, quorum.PinKey("own")).Val() != 0 {
		t.Error("the booking connection's extend pinned its lock")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "own", Value: "me", Round: "r1@", Fair: true}); !r.OK {
		t.Errorf("the close's release of an unpinned lock = %+v", r)
	}

	// A force release takes the pin too; a later lock of the same owner is
	// not pinned by it.
	acquire("f")
	extend("f", 10*time.Second, "", 1)
	if r := forceDel(t, n, "f", ""); !r.OK {
		t.Fatalf("DEL = %+v", r)
	}
	if rdb.Exists(ctx, quorum.PinKey("f")).Val() != 0 {
		t.Error("a force release left the pin")
	}

	// A pin ends with the window it promised: then the close releases.
	acquire("short")
	extend("short", 200*time.Millisecond, "", 1)
	time.Sleep(300 * time.Millisecond)
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "short", Value: "me", Round: "r1@", Fair: true}); !r.OK {
		t.Errorf("the close's release after the pin ended = %+v", r)
	}

	// A plain lock (no session renews it) gets the TTL asked, as from PEXPIRE.
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "plain", Value: "me", TTL: 5 * time.Second, Round: "p1", Pad: 7 * time.Millisecond}); !r.OK {
		t.Fatalf("SetNX plain = %+v", r)
	}
	if !extend("plain", 300*time.Millisecond, "", 1) {
		t.Fatal("extend of a plain lock refused")
	}
	if ttl := rdb.PTTL(ctx, "plain").Val(); ttl > 300*time.Millisecond {
		t.Errorf("a plain lock's TTL after an extend to 300 ms = %v; want it replaced", ttl)
	}
	if ttl := rdb.PTTL(ctx, quorum.PinKey("plain")).Val(); ttl > 300*time.Millisecond {
		t.Errorf("a plain lock's pin after an extend to 300 ms = %v; want it to follow the TTL", ttl)
	}

	// The rollback of a session's acquire leaves a pinned lock to its
	// window, a timed lock: no session renews it.
	acquire("undone")
	extend("undone", 20*time.Second, "", 1)
	if r := do(t, n, quorum.Op{Kind: quorum.OpUndo, Key: "undone", Value: "me", Round: "r1@"}); r.OK {
		t.Error("the rollback of the acquire deleted a pinned lock")
	}
	if note := rdb.Get(ctx, quorum.MetaKey("undone")).Val(); !strings.HasPrefix(note, "r1 ") {
		t.Errorf("note after a rollback left a pinned lock = %q; want round r1 without the session's mark", note)
	}

	// A re-attach never shortens a lock either.
	acquire("re")
	extend("re", 20*time.Second, "", 1)
	if r := do(t, n, quorum.Op{Kind: quorum.OpReattach, Key: "re", Value: "me", TTL: time.Second, Pad: time.Millisecond, Round: "r9"}); !r.OK {
		t.Fatalf("re-attach = %+v", r)
	}
	if ttl := rdb.PTTL(ctx, "re").Val(); ttl < 19*time.Second {
		t.Errorf("a re-attach shortened the lock to %v", ttl)
	}
}
