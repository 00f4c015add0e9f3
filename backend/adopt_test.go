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
	// A backend a re-attach missed, whose key expired since: its note names
	// the round before, with the lock's token (the lease's round here is a
	// re-attach's).
	restoreAs := func(round string, granted int64) {
		leases := []quorum.Lease{{Key: "k", Value: "me", TTL: 20 * time.Second, Pad: 3 * time.Millisecond, Round: round, Token: "41", Granted: granted}}
		if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, AuxTTL: time.Second, N: 1}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	c.Del(ctx, "k")
	c.Set(ctx, quorum.MetaKey("k"), "mine@ 2 41", 10*time.Second)
	restoreAs("1.1000.7^cd.1@", 41)
	if c.Get(ctx, "k").Val() != "me" {
		t.Fatal("the restore left the key absent under its lock's earlier round's note")
	}
	for _, note := range []string{"other@ 2 40", "1.2000.1^ef.1@ 2 41"} {
		c.Del(ctx, "k")
		c.Set(ctx, quorum.MetaKey("k"), note, 10*time.Second)
		restoreAs("1.1000.7^cd.1@", 41)
		if c.Exists(ctx, "k").Val() != 0 {
			t.Fatalf("the restore set the key during the lock-delay of note %q (another lock's, or a later round's)", note)
		}
	}
}

// TestRestoreKeepsTheLocksOwnLockDelay (helper-76): a restore notes the
// lock-delay of the lock's kind (the engine sends both: TTL for SET NX PX's
// and connection-bound locks', AuxTTL for the native, fenced ones'), and
// never shortens the own note it replaces. Before, every restore noted the
// native locks' delay: a connection-bound lock (lock_delay 10 s here, the
// native 0) restored over its own note kept no lead there, and once that
// happened on a quorum (one pause at a time), the lock expiring unreleased
// was free inside its lock_delay (e2e TestRestoresKeepABoundLocksLockDelay).
func TestRestoreKeepsTheLocksOwnLockDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const lockDelay = 10 * time.Second
	for _, tc := range []struct {
		round, token string
		note         time.Duration // the own note's TTL left (the key expired here)
	}{
		{"ab.1~", quorum.NoToken, lockDelay - 500*time.Millisecond}, // a connection-bound lock
		{"ab.2@", "=7", lockDelay - 500*time.Millisecond},           // a SET NX PX lock re-attached as a session, its token fixed
		{"ab.3@", "7", 0}, // a native lock: its own delay (0 here), no note left
	} {
		c.Del(ctx, "k", quorum.MetaKey("k"))
		if tc.note > 0 {
			c.Set(ctx, quorum.MetaKey("k"), tc.round+" 18", tc.note)
		}
		leases := []quorum.Lease{{Key: "k", Value: "me", TTL: 1500 * time.Millisecond, Pad: 18 * time.Millisecond, Round: tc.round, Token: tc.token}}
		if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, TTL: lockDelay, AuxTTL: 0, N: 1}); r.Err != nil {
			t.Fatal(r.Err)
		}
		if c.Get(ctx, "k").Val() != "me" {
			t.Fatalf("%s: not restored", tc.round)
		}
		lead := c.PExpireTime(ctx, quorum.MetaKey("k")).Val() - c.PExpireTime(ctx, "k").Val()
		want := lockDelay
		if tc.token == "7" {
			want = 0
		}
		if lead < want-time.Second || lead > want+time.Second {
			t.Errorf("%s (token %q): the restored note outlives the key by %v; want the lock's lock-delay, %v", tc.round, tc.token, lead, want)
		}
	}
}
