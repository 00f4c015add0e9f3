package backend

import (
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
