package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// SET XX PX by a lock's holder (its own value) keeps the lock as it is
// but for its TTL: its lock-delay (the note outliving the key) too, as an
// extend keeps it. Before, the note ended with the key.
func TestOverwriteBySameValueKeepsTheLockDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "s", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond, AuxTTL: 5 * time.Second}); !r.OK || r.Err != nil {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "s", TTL: 20 * time.Second, Round: "r2", Pad: 10 * time.Millisecond}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX = %+v", r)
	}
	c := s.Client()
	defer c.Close()
	key, _ := c.PTTL(ctx, "k").Result()
	note, err := c.PTTL(ctx, quorum.MetaKey("k")).Result()
	if err != nil || key < 15*time.Second || note < key+4*time.Second {
		t.Fatalf("after SET XX by the holder: PTTL k = %v, note %v, %v; want the new TTL and the note 5s longer (the lock-delay)", key, note, err)
	}
}

// TestOverwriteByAnotherValueHasTheLockDelay (helper-79's side note): SET
// XX PX with another value (ShedLock's overwrite) is a new holder's lock,
// and gets the lock-delay (OpSetXX's AuxTTL, Settings.LockDelay) as an
// acquire does: its note outlives it by exactly that. Before, the note
// ended with the key, and the new holder's lock, if it expired unreleased,
// was free at once.
func TestOverwriteByAnotherValueHasTheLockDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "s", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	for i, ifEq := range []string{"", "t"} { // an overwrite, then a compare-and-set of its value
		value := []string{"t", "u"}[i]
		if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: value, IfEq: ifEq, TTL: 20 * time.Second, Round: "r2", Pad: 10 * time.Millisecond, AuxTTL: 3 * time.Second}); !r.OK {
			t.Fatalf("SetXX %s = %+v", value, r)
		}
		at := c.Do(ctx, "PEXPIRETIME", "k").Val().(int64)
		if lead := c.Do(ctx, "PEXPIRETIME", quorum.MetaKey("k")).Val().(int64) - at; lead != 3000 || c.Get(ctx, "k").Val() != value {
			t.Fatalf("after SET XX %s: key %q, the note outlives it by %d ms; want %q and 3000 (the lock-delay)", value, c.Get(ctx, "k").Val(), lead, value)
		}
	}
}

// TestOverwritePinAgainstRedis: SET XX PX by the holder's own value keeps
// the lock's round (a connection-bound lock stays in its session), so from
// any connection but the one whose round the note names it pins its promise for
// exactly its TTL: the release at the booking
// connection's close and the acquire's rollback leave the lock to it. An
// overwrite with another value deletes the old value's pin, which would
// otherwise keep a later lock of that value past its own release.
func TestOverwritePinAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	rdb := s.Client()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "me", TTL: 5 * time.Second, Round: "r1~", Pad: 7 * time.Millisecond}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "me", TTL: 20 * time.Second, Round: "r2", Pad: 7 * time.Millisecond, Aux: "r1~"}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX from the booking connection = %+v", r)
	}
	if rdb.Exists(ctx, quorum.PinKey("k")).Val() != 0 {
		t.Error("SET XX from the booking connection (its round r1~ named) pinned the lock: its close would not release it")
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "me", TTL: 20 * time.Second, Round: "r2", Pad: 7 * time.Millisecond, Aux: "r0~"}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX from a connection whose booking is stale = %+v", r)
	}
	if rdb.Exists(ctx, quorum.PinKey("k")).Val() != 1 {
		t.Error("SET XX from a connection whose booked round the note no longer names pinned nothing: the lock's current session's close would release it")
	}
	rdb.Del(ctx, quorum.PinKey("k"))
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "me", TTL: 20 * time.Second, Round: "r2", Pad: 7 * time.Millisecond}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX = %+v", r)
	}
	if pin, ttl := rdb.Get(ctx, quorum.PinKey("k")).Val(), rdb.PTTL(ctx, quorum.PinKey("k")).Val(); pin != "me" || ttl < 19*time.Second || ttl > 20*time.Second {
		t.Errorf("pin after SET XX by the holder's value = %q for %v; want \"me\" for the 20 s promised", pin, ttl)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "me", TTL: 100 * time.Millisecond, Round: "r2", Pad: 7 * time.Millisecond}); !r.OK {
		t.Fatalf("a shorter SetXX = %+v", r)
	}
	if ttl := rdb.PTTL(ctx, "k").Val(); ttl < 19*time.Second {
		t.Errorf("SET XX PX 100 by the holder's value cut a connection-bound lock to %v; want it never shortened (its session renews it)", ttl)
	}
	if ttl := rdb.PTTL(ctx, quorum.PinKey("k")).Val(); ttl < 19*time.Second {
		t.Errorf("SET XX PX 100 cut the pin of a connection-bound lock to %v; want the 20 s promised before kept", ttl)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me", Round: "r1~"}); r.OK {
		t.Error("the release at the booking connection's close deleted a lock SET XX promised 20 s")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpUndo, Key: "k", Value: "me", Round: "r1~"}); r.OK {
		t.Error("the rollback of the acquire deleted a lock SET XX promised 20 s")
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "other", TTL: 5 * time.Second, Round: "r3"}); !r.OK {
		t.Fatalf("SetXX with another value = %+v", r)
	}
	if rdb.Exists(ctx, quorum.PinKey("k")).Val() != 0 {
		t.Fatal("an overwrite with another value left the old value's pin")
	}
	// The old value's later lock is released at its close as usual.
	if r := forceDel(t, n, "k", ""); !r.OK {
		t.Fatalf("Del = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "me", TTL: 5 * time.Second, Round: "r4~"}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me", Round: "r4~"}); !r.OK {
		t.Error("a later lock of the old value outlived its close: a stale pin kept it")
	}
}
