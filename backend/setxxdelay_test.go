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
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "s", TTL: 20 * time.Second, Round: "r2", Pad: 10 * time.Millisecond}); !r.OK || r.Err != nil {
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
