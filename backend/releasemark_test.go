package backend

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestReleaseKeepsTheLockDelayMarked: a release (OpDelIfEq with a Mark)
// deletes the lock but keeps a note that outlives it (a lock-delay) as
// "!<mark>" with its TTL, answering Noted; only OpUnmark with that mark
// removes it, and meanwhile the key cannot be set. A lock without a
// lock-delay loses its note at once, as before.
func TestReleaseKeepsTheLockDelayMarked(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	acquire := func(key string, delay time.Duration) {
		t.Helper()
		if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond, AuxTTL: delay}); !r.OK || r.Err != nil {
			t.Fatalf("SetNX %s = %+v", key, r)
		}
	}

	acquire("d", 5*time.Second)
	r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "d", Value: "v", Mark: "rel1"})
	if !r.OK || !r.Noted || r.N != 1 || r.Err != nil {
		t.Fatalf("release of a lock with a lock-delay = %+v; want OK, N 1, Noted (marked)", r)
	}
	note, ttl := c.Get(ctx, quorum.MetaKey("d")).Val(), c.PTTL(ctx, quorum.MetaKey("d")).Val()
	if c.Exists(ctx, "d").Val() != 0 || note != "!rel1" || ttl < 14*time.Second {
		t.Fatalf("after the release: key exists %d, note %q for %v; want the key gone, the note \"!rel1\" with its TTL (about 15 s)",
			c.Exists(ctx, "d").Val(), note, ttl)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "d", Value: "w", TTL: time.Second, Round: "r2", Pad: time.Millisecond}); r.OK {
		t.Fatal("SetNX over a marked note succeeded: a release not yet known to have succeeded ended the lock-delay")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpUnmark, Key: "d", Value: "rel2"}); r.OK || c.Exists(ctx, quorum.MetaKey("d")).Val() != 1 {
		t.Fatalf("OpUnmark with another release's id = %+v; want the mark kept", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpUnmark, Key: "d", Value: "rel1"}); !r.OK || c.Exists(ctx, quorum.MetaKey("d")).Val() != 0 {
		t.Fatalf("OpUnmark = %+v; want the mark removed", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "d", Value: "w", TTL: time.Second, Round: "r2", Pad: time.Millisecond}); !r.OK {
		t.Fatalf("SetNX after the unmark = %+v; want it set", r)
	}

	acquire("p", 0)
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "p", Value: "v", Mark: "rel3"}); !r.OK || r.Noted {
		t.Fatalf("release of a lock without a lock-delay = %+v; want OK, not marked", r)
	}
	if c.Exists(ctx, "p", quorum.MetaKey("p")).Val() != 0 {
		t.Fatal("a lock without a lock-delay kept its note after its release")
	}
}

// TestNoDelayIsNeverMarked (helper-63): a lock without a lock-delay (AuxTTL
// 0, Settings.LockDelay's default) loses its note with its release, never
// keeps it marked. On redis 7.0 a script's SET PX and PTTL read the clock
// as they run (it is not frozen), so the note set after the key can expire
// a ms later, and delifeq.lua reads the note's PTTL before the key's: with a
// mark wherever PTTL(note) > PTTL(key), 9 to 26 of 3000 were marked.
func TestNoDelayIsNeverMarked(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	marked := 0
	const runs = 3000
	for i := range runs {
		key := fmt.Sprintf("p%d", i)
		if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond}); !r.OK || r.Err != nil {
			t.Fatalf("SetNX %s = %+v", key, r)
		}
		if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: key, Value: "v", Mark: "rel"}); !r.OK {
			t.Fatalf("release = %+v", r)
		} else if r.Noted {
			marked++
		}
	}
	if marked > 0 {
		t.Fatalf("%d of %d releases of locks without a lock-delay kept their note marked", marked, runs)
	}
}

// TestExtendsKeepNoDelay (helper-63): each extend measures the note's lead
// over its key again, on a clock that moves inside the script, and keeps
// it: before leads of 2 ms or less counted as none, the lead walked, and a
// lock without a lock-delay had one of 12-15 ms after 5000 extends (a
// session lock's renewals), and its release marked it.
func TestExtendsKeepNoDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "d", Value: "v", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	for range 5000 {
		if r := do(t, n, quorum.Op{Kind: quorum.OpPExpireIfEq, Key: "d", Value: "v", TTL: 10 * time.Second, Pad: 10 * time.Millisecond}); !r.OK {
			t.Fatalf("extend = %+v", r)
		}
	}
	lead := c.PTTL(ctx, quorum.MetaKey("d")).Val() - c.PTTL(ctx, "d").Val()
	if lead >= 5*time.Millisecond { // below 5 ms a lead is no lock-delay (notelead.lua)
		t.Fatalf("a lock without a lock-delay has one of %v after 5000 extends", lead)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "d", Value: "v", Mark: "rel"}); !r.OK || r.Noted {
		t.Fatalf("release after 5000 extends = %+v; want deleted, not marked", r)
	}
}
