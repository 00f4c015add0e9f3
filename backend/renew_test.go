package backend

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestRenewAgainstRedis: one OpRenew extends every lease its holder still
// holds with an open window, in one script, and answers per lease; a lease of
// another owner or of a lock gone is left alone.
func TestRenewAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	var leases []quorum.Lease
	for i := range 5 {
		key := fmt.Sprintf("k%d", i)
		if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "me", TTL: 2 * time.Second, Round: "r", Pad: 2 * time.Millisecond}); !r.OK {
			t.Fatalf("SetNX %s = %+v", key, r)
		}
		leases = append(leases, quorum.Lease{Key: key, Value: "me", TTL: 30 * time.Second, Pad: 5 * time.Millisecond})
	}
	s.Client().Set(ctx, "k1", "other", time.Minute) // taken over
	s.Client().Del(ctx, "k3")                       // gone
	r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases})
	if r.Err != nil || r.Each == nil || len(*r.Each) != 5 {
		t.Fatalf("renew = %+v", r)
	}
	for i, ok := range *r.Each {
		want := i != 1 && i != 3
		if ok != want {
			t.Errorf("lease %d renewed = %v, want %v", i, ok, want)
		}
	}
	if ttl := s.Client().PTTL(ctx, "k0").Val(); ttl < 25*time.Second {
		t.Errorf("k0's TTL after renewal = %v, want about 30s", ttl)
	}
	if ttl := s.Client().PTTL(ctx, "k1").Val(); ttl > time.Minute || ttl < 50*time.Second {
		t.Errorf("other owner's k1 TTL = %v, want untouched (about 1m)", ttl)
	}
	if s.Client().Exists(ctx, "k3").Val() != 0 {
		t.Error("a renewal brought back a lock that was gone")
	}
	if note := s.Client().Get(ctx, quorum.MetaKey("k0")).Val(); note != "r 5" {
		t.Errorf("k0's note = %q, want the round and the new padding", note)
	}
}

// TestLockDelayAgainstRedis: an acquire with a delay leaves its note the
// delay longer than the lock; while the note outlives the lock, the key
// cannot be set; an extend keeps the note that much longer; a release frees
// the key at once.
func TestLockDelayAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	acquire := func(key, value string, ttl, delay time.Duration) bool {
		t.Helper()
		r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: value, TTL: ttl, Round: "r-" + value, AuxTTL: delay})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		return r.OK
	}
	if !acquire("k", "a", time.Minute, 30*time.Second) {
		t.Fatal("first acquire refused")
	}
	if ttl := s.Client().PTTL(ctx, quorum.MetaKey("k")).Val(); ttl < 85*time.Second {
		t.Fatalf("note TTL = %v; want the lock's minute plus the 30s delay", ttl)
	}
	// Extended to 2 minutes: the note still outlives it by the delay.
	if r := do(t, n, quorum.Op{Kind: quorum.OpPExpireIfEq, Key: "k", Value: "a", TTL: 2 * time.Minute}); !r.OK {
		t.Fatalf("extend = %+v", r)
	}
	if ttl := s.Client().PTTL(ctx, quorum.MetaKey("k")).Val(); ttl < 145*time.Second {
		t.Fatalf("note TTL after an extend to 2m = %v; want 2m30s less a moment", ttl)
	}
	// The lock expires (here: its key goes, as expiry would take it): delayed.
	s.Client().Del(ctx, "k")
	if acquire("k", "b", time.Minute, 0) {
		t.Fatal("acquired a lock within its lock-delay")
	}
	// A release frees at once.
	if !acquire("r", "a", time.Minute, 30*time.Second) {
		t.Fatal("acquire refused")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "r", Value: "a"}); !r.OK {
		t.Fatalf("release = %+v", r)
	}
	if !acquire("r", "b", time.Minute, 0) {
		t.Fatal("a released lock was not free at once")
	}
	// Without a delay the note goes with the lock.
	if !acquire("p", "a", time.Minute, 0) {
		t.Fatal("acquire refused")
	}
	// Both TTLs in one script: two separate reads would measure the gap
	// between them on a busy machine.
	ttls, err := s.Client().Eval(ctx, `return {redis.call("PTTL", KEYS[1]), redis.call("PTTL", KEYS[2])}`,
		[]string{quorum.MetaKey("p"), "p"}).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(ttls[0]-ttls[1]) * time.Millisecond; d > 5*time.Millisecond || d < -5*time.Millisecond {
		t.Fatalf("note outlives an undelayed lock by %v", d)
	}
}

// TestReattachAgainstRedis: OpReattach extends the holder's lock and notes
// the new round, keeping its token and its lock-delay lead; from then on a
// renewal or a release that names the old round leaves the lock alone, and
// ones that name the new round reach it. It moves only a lock noting the
// token it names (the one the engine read Q holders agree on). A restore
// notes its lease's round.
func TestReattachAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "me", TTL: 2 * time.Second, Round: "old", Pad: 2 * time.Millisecond,
		Aux: quorum.TokenKey, AuxTTL: 10 * time.Second}); !r.OK || r.Token == 0 {
		t.Fatalf("fenced SetNX = %+v", r)
	}
	token := s.Client().Get(ctx, quorum.MetaKey("k")).Val()
	if r := do(t, n, quorum.Op{Kind: quorum.OpReattach, Key: "k", Value: "other", TTL: time.Minute, Round: "new"}); r.OK {
		t.Fatalf("another owner's re-attach = %+v; want refused", r)
	}
	_, tok, found := strings.Cut(token, " 2 ?") // the acquire notes its counter as its token, tentative
	if !found {
		t.Fatalf("a fenced acquire's note = %q; want its counter tentative", token)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpReattach, Key: "k", Value: "me", TTL: time.Minute, Pad: 3 * time.Millisecond, Round: "new", IfEq: tok + "0"}); r.OK {
		t.Fatalf("re-attach naming another token than the noted one = %+v; want refused (a raise landed since the read)", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpReattach, Key: "k", Value: "me", TTL: time.Minute, Pad: 3 * time.Millisecond, Round: "new", IfEq: tok}); !r.OK || r.Err != nil {
		t.Fatalf("re-attach = %+v", r)
	}
	note := s.Client().Get(ctx, quorum.MetaKey("k")).Val()
	if note != "new 3 "+tok {
		t.Fatalf("note after re-attach = %q (before: %q); want the new round, the new padding, the same token", note, token)
	}
	if lead := s.Client().PTTL(ctx, quorum.MetaKey("k")).Val() - s.Client().PTTL(ctx, "k").Val(); lead < 9*time.Second {
		t.Fatalf("the note outlives the key by %v after re-attach; want the 10s lock-delay kept", lead)
	}
	renew := func(round string) bool {
		leases := []quorum.Lease{{Key: "k", Value: "me", TTL: 30 * time.Second, Round: round}}
		r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases})
		if r.Err != nil || r.Each == nil {
			t.Fatalf("renew = %+v", r)
		}
		return (*r.Each)[0]
	}
	if renew("old") {
		t.Fatal("a renewal naming the old round extended the re-attached lock")
	}
	if ttl := s.Client().PTTL(ctx, "k").Val(); ttl < 50*time.Second {
		t.Fatalf("the old round's renewal shortened the lock to %v", ttl)
	}
	if !renew("new") || !renew("") {
		t.Fatal("a renewal naming the new round, or none, was refused")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me", Fair: true, Round: "old"}); r.OK {
		t.Fatalf("a release naming the old round = %+v; want the lock left alone", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "me", Fair: true, Round: "new"}); !r.OK {
		t.Fatalf("a release naming the new round = %+v", r)
	}
	// A restore (key and note absent) notes the lease's round.
	leases := []quorum.Lease{{Key: "r", Value: "me", TTL: 30 * time.Second, Pad: 4 * time.Millisecond, Round: "mine"}}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, AuxTTL: time.Second, N: 1}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if note := s.Client().Get(ctx, quorum.MetaKey("r")).Val(); note != "mine 4 0" {
		t.Fatalf("a restored lock's note = %q; want its lease's round", note)
	}
}

// TestReattachOrderAgainstRedis: a re-attach round moves a lock only from
// a round of an order not above its own (reattach.lua; generation, send
// time, random part): an acquire's round moves to any re-attach's, a later
// re-attach's stays when an earlier one lands after it, and a later
// generation wins whatever its send time.
func TestReattachOrderAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "me", TTL: 5 * time.Second, Round: "ab.1@", Pad: 2 * time.Millisecond}); !r.OK {
		t.Fatalf("SetNX = %+v", r)
	}
	reattach := func(round string) bool {
		r := do(t, n, quorum.Op{Kind: quorum.OpReattach, Key: "k", Value: "me", TTL: 5 * time.Second, Pad: 2 * time.Millisecond, Round: round})
		if r.Err != nil {
			t.Fatalf("re-attach %s: %v", round, r.Err)
		}
		return r.OK
	}
	noted := func() string { r, _, _ := strings.Cut(s.Client().Get(ctx, quorum.MetaKey("k")).Val(), " "); return r }
	for _, step := range []struct {
		round string
		moves bool
		names string
	}{
		{"1.1000.5^cd.1@", true, "1.1000.5^cd.1@"},  // from the acquire's round
		{"1.999.9^ef.1@", false, "1.1000.5^cd.1@"},  // one of the same generation sent before, landing late
		{"1.1000.4^ef.1@", false, "1.1000.5^cd.1@"}, // sent in the same ms, a smaller random part
		{"1.1000.6^ef.2@", true, "1.1000.6^ef.2@"},
		{"2.900.1^ab.2@", false, "1.1000.6^ef.2@"}, // the next generation, but its request arrived earlier
		{"2.1000.1^ab.2@", true, "2.1000.1^ab.2@"}, // the next generation, arrived in the same ms
		{"1.5000.9^ab.3@", true, "1.5000.9^ab.3@"}, // arrived later, whatever round it read
	} {
		if got := reattach(step.round); got != step.moves || noted() != step.names {
			t.Fatalf("re-attach %s = %v, note names %q; want %v, %q", step.round, got, noted(), step.moves, step.names)
		}
	}
}
