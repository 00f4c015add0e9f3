package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A session renewal that restores a lock on a backend that lost it (a
// restart) notes it with the lock's lock-delay (the OpRenew's AuxTTL, the
// native locks' delay): once restores replaced a quorum of the original
// holders, a lock that expires unreleased (its replica stopped) must still
// stay taken for its delay. Before, a restored note ended with the key, and
// such a lock was free at once on the restored nodes.
func TestRenewalRestoreKeepsTheLockDelay(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	leases := []quorum.Lease{{Key: "k", Value: "s", TTL: 10 * time.Second, Pad: 10 * time.Millisecond}}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, AuxTTL: 5 * time.Second, N: 1}); r.Err != nil || r.Each == nil || (*r.Each)[0] {
		t.Fatalf("restoring renewal = %+v; want not counted", r)
	}
	c := s.Client()
	defer c.Close()
	key, err := c.PTTL(ctx, "k").Result()
	if err != nil || key <= 0 {
		t.Fatalf("PTTL k = %v, %v; want restored", key, err)
	}
	note, err := c.PTTL(ctx, quorum.MetaKey("k")).Result()
	if err != nil || note < key+4*time.Second {
		t.Fatalf("restored note's PTTL = %v, %v (key's %v); want the key's plus the 5s lock-delay", note, err, key)
	}
	// An extend of the restored lock keeps the delay.
	if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, AuxTTL: 5 * time.Second, N: 1}); r.Err != nil || !(*r.Each)[0] {
		t.Fatalf("renewal of the restored lock = %+v; want extended", r)
	}
	key, _ = c.PTTL(ctx, "k").Result()
	if note, err = c.PTTL(ctx, quorum.MetaKey("k")).Result(); err != nil || note < key+4*time.Second {
		t.Fatalf("extended note's PTTL = %v, %v (key's %v); want the key's plus the lock-delay", note, err, key)
	}
}
