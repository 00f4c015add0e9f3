package backend

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestNoteLeadAndWindowOverMixedOps (helper-78, notelead.lua): 5000 extends, renewals (shortening and
// never-shorten paths), re-attaches and SET XX on the same value, for a
// lock-delay of 0, 10 ms and 5 s. After each op: the key expires no earlier
// than (request sent + TTL asked) (the engine's window), never in the past,
// and the note's lead (PEXPIRETIME note - PEXPIRETIME key) stays the delay.
func TestNoteLeadAndWindowOverMixedOps(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	for _, delay := range []time.Duration{0, 10 * time.Millisecond, 5 * time.Second} {
		key := fmt.Sprintf("k%d", delay.Milliseconds())
		meta := quorum.MetaKey(key)
		if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: 10 * time.Second, Round: "r1", Pad: 10 * time.Millisecond, AuxTTL: delay}); !r.OK {
			t.Fatalf("SetNX = %+v", r)
		}
		lead0 := c.Do(ctx, "PEXPIRETIME", meta).Val().(int64) - c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
		for i := range 5000 {
			// 1 s then 15 s: the never-shorten paths see a TTL under the one
			// asked (50 ms here failed in a CI run: the next op came after
			// the window's end on a loaded machine, and was refused).
			ttl := []time.Duration{10 * time.Second, 20 * time.Second, 3 * time.Second, time.Second, 15 * time.Second}[i%5]
			var op quorum.Op
			switch i % 4 {
			case 0:
				op = quorum.Op{Kind: quorum.OpPExpireIfEq, Key: key, Value: "v", TTL: ttl, Pad: 10 * time.Millisecond}
			case 1:
				leases := []quorum.Lease{{Key: key, Value: "v", TTL: ttl, Pad: 10 * time.Millisecond, Round: "r1"}}
				op = quorum.Op{Kind: quorum.OpRenew, Leases: &leases}
			case 2:
				op = quorum.Op{Kind: quorum.OpReattach, Key: key, Value: "v", TTL: ttl, Pad: 10 * time.Millisecond, Round: "r1"}
			case 3:
				op = quorum.Op{Kind: quorum.OpSetXX, Key: key, Value: "v", TTL: ttl, Round: "r1", Pad: 10 * time.Millisecond, Aux: "r1"}
			}
			before := time.Now().UnixMilli()
			r := doFenced(t, n, op)
			if r.Err != nil || (op.Kind != quorum.OpRenew && !r.OK) || (op.Kind == quorum.OpRenew && !(*r.Each)[0]) {
				t.Fatalf("delay %v op %d (%v) = %+v", delay, i, op.Kind, r)
			}
			at := c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
			nat := c.Do(ctx, "PEXPIRETIME", meta).Val().(int64)
			if at < before+ttl.Milliseconds() {
				t.Fatalf("delay %v op %d (%v, TTL %v): key expires at %d, %d ms before request+TTL", delay, i, op.Kind, ttl, at, before+ttl.Milliseconds()-at)
			}
			if d := nat - at - lead0; d < -1 || d > 1 {
				t.Fatalf("delay %v op %d (%v): lead %d ms, was %d", delay, i, op.Kind, nat-at, lead0)
			}
		}
		t.Logf("delay %v: lead stayed %d ms", delay, lead0)
		r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: key, Value: "v", Mark: "rel"})
		if !r.OK || r.Noted != (delay > 0) {
			t.Fatalf("release after 5000 ops (delay %v) = %+v", delay, r)
		}
	}
}

// TestReleaseOfAKeyWithoutTTLIsNotMarked (helper-78; failed 3 of 3 on 1ca8f7d): delifeq marks a release only
// where the note outlives the key by a lock-delay. A key without a TTL
// (PTTL -1: scripts such as pexpireifeq.lua handle it, ttl < 0) is never
// outlived by its note, and before 1ca8f7d (ttl > 0 guard) its release
// deleted the note. Now noteLead(key, meta) without ttl falls back, for
// PEXPIRETIME(key) = -1, to PTTL(meta) - PTTL(key) = PTTL(meta) + 1: any note
// with a TTL of 4 ms or more makes the release keep it as "!<id>", and the
// key stays unavailable for the note's whole TTL where the unmark is missed.
func TestReleaseOfAKeyWithoutTTLIsNotMarked(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	c.Set(ctx, "k", "v", 0)                                  // a lock whose key has no TTL here
	c.Set(ctx, quorum.MetaKey("k"), "r1 10", 30*time.Second) // its note, with a TTL
	r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "v", Mark: "rel"})
	if !r.OK || r.Err != nil {
		t.Fatalf("release = %+v", r)
	}
	if r.Noted || c.Exists(ctx, quorum.MetaKey("k")).Val() != 0 {
		t.Fatalf("release of a key without a TTL = %+v, note now %q (PTTL %v); want deleted, not marked: the note does not outlive a key that never expires",
			r, c.Get(ctx, quorum.MetaKey("k")).Val(), c.PTTL(ctx, quorum.MetaKey("k")).Val())
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "w", TTL: time.Second, Round: "r2", Pad: time.Millisecond}); !r.OK {
		t.Fatalf("SetNX after the release = %+v; want it free", r)
	}
}
