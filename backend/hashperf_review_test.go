package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestHashPerfRWOpsOnAStringKey (review of 5a89da5): on a node where the
// key is a string lock, a read-write lock's acquire is refused as taken
// (the key's PTTL) and its release answers -1 (not this lock's), without a
// server error, as e61a279's scripts answer (rwMode's pcall HGET found no
// read-write lock). 5a89da5's rwMode(key, owner) raises WRONGTYPE there.
func TestHashPerfRWOpsOnAStringKey(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	const key = "str"
	if err := c.Set(t.Context(), key, "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"read", "write"} {
		r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: "o:1:write", TTL: time.Minute, Round: "r", Mode: mode})
		if r.Err != nil || r.OK || r.N <= 0 {
			t.Errorf("%s acquire on a string lock's key = %+v; want refused with its PTTL, no error", mode, r)
		}
		r = do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: "o:1:write", Mode: mode, Mark: "m"})
		if r.Err != nil || r.N != -1 {
			t.Errorf("%s release on a string lock's key = %+v; want -1 (not this lock's), no error", mode, r)
		}
	}
}
