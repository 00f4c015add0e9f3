package backend

import (
	"fmt"
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
	r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: leases})
	if r.Err != nil || len(r.Each) != 5 {
		t.Fatalf("renew = %+v", r)
	}
	for i, ok := range r.Each {
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
