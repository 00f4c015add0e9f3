package backend

import (
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestRenewalAdoptsWhatItsReattachMissed (helper-75): a backend a re-attach
// missed (paused, cut off) keeps the lock under its earlier round; the
// re-attached lease's renewal adopts it there (pexpireifeq.lua) when its
// note carries the lock's own token, and counts it, instead of answering
// "not held" for good: before, one more fault left the lock on fewer than
// Q and its session lost it under an open connection. Never a lock of
// another token, nor one a later re-attach moved.
func TestRenewalAdoptsWhatItsReattachMissed(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const older, lease, later = "ab.1@", "1.1000.7^cd.1@", "1.2000.3^ef.1@"
	set := func(note string) {
		c.Set(ctx, "k", "me", 10*time.Second)
		c.Set(ctx, quorum.MetaKey("k"), note, 10*time.Second)
	}
	renew := func(granted int64, restoreToken string) bool {
		leases := []quorum.Lease{{Key: "k", Value: "me", TTL: 20 * time.Second, Pad: 3 * time.Millisecond, Round: lease, Granted: granted, Token: restoreToken}}
		op := quorum.Op{Kind: quorum.OpRenew, Leases: &leases}
		if restoreToken != "" {
			op.AuxTTL, op.N = time.Second, 1
		}
		r := do(t, n, op)
		if r.Err != nil || r.Each == nil {
			t.Fatalf("renew = %+v", r)
		}
		return (*r.Each)[0]
	}
	round := func() string { r, _, _ := strings.Cut(c.Get(ctx, quorum.MetaKey("k")).Val(), " "); return r }

	set(older + " 2 41")
	if !renew(41, "") || round() != lease || c.PTTL(ctx, "k").Val() < 15*time.Second {
		t.Fatalf("the lease's renewal over its lock's earlier round (same token) = round %q, TTL %v; want adopted, extended", round(), c.PTTL(ctx, "k").Val())
	}
	set(older + " 2 =41")
	if !renew(0, "=41") || round() != lease {
		t.Fatalf("a restore over the lock's earlier round with the agreed fixed token: round %q; want adopted", round())
	}
	for _, tc := range []struct {
		note, restore string
		granted       int64
		why           string
	}{
		{older + " 2 42", "", 41, "another token: another lock"},
		{older + " 2 41", "", 0, "no token known to the lease"},
		{older + " 2 ?41", "", 0, "a tentative token, none agreed"},
		{older + " 2 41", "0", 0, "a restore whose holders agreed on no token"},
		{later + " 2 41", "", 41, "a later re-attach's round"},
		{"ab.1~ 2 41", "", 7, "a connection-bound lock of another token"},
	} {
		set(tc.note)
		if renew(tc.granted, tc.restore) || round() == lease {
			t.Errorf("%s: note %q adopted (round now %q)", tc.why, tc.note, round())
		}
	}
}

// TestRestoreOverItsOwnLockDelay (helper-75): a backend paused past the TTL
// lost the key but keeps its note (a lock-delay) naming the lease's own
// round: the restore sets the key again there (a lock-delay keeps other
// owners out, not the lock's own restore). Never over another round's note.
func TestRestoreOverItsOwnLockDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	restore := func() {
		leases := []quorum.Lease{{Key: "k", Value: "me", TTL: 20 * time.Second, Pad: 3 * time.Millisecond, Round: "mine@", Token: "41"}}
		if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, AuxTTL: time.Second, N: 1}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	c.Set(ctx, quorum.MetaKey("k"), "mine@ 2 41", 10*time.Second)
	restore()
	if c.Get(ctx, "k").Val() != "me" {
		t.Fatal("the restore left the key absent under its own lock's note")
	}
	c.Del(ctx, "k")
	c.Set(ctx, quorum.MetaKey("k"), "other@ 2 40", 10*time.Second)
	restore()
	if c.Exists(ctx, "k").Val() != 0 {
		t.Fatal("the restore set the key during another lock's lock-delay")
	}
}
