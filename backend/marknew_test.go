package backend

import (
	"errors"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// MarkNew marks and seeds a server no replica has seen, and refuses (changing
// nothing) once it carries a marker or a max-TTL record.
func TestMarkNew(t *testing.T) {
	s := redistest.Start(t, 2)
	n, seen := newNode(t, s[0]), newNode(t, s[1])
	ctx := t.Context()
	if _, _, err := seen.Record(ctx, time.Minute, "test", 1); err != nil {
		t.Fatal(err)
	}
	if err := seen.MarkNew(ctx, "run", 7000); !errors.Is(err, quorum.ErrNotNew) {
		t.Fatalf("MarkNew on a recorded server = %v; want ErrNotNew", err)
	}
	if n, _ := s[1].Client().Exists(ctx, quorum.IntactKey, quorum.TokenKey).Result(); n != 0 {
		t.Fatalf("a refused MarkNew wrote %d keys", n)
	}
	if err := n.MarkNew(ctx, "run", 7000); err != nil {
		t.Fatal(err)
	}
	if err := n.MarkNew(ctx, "run", 9000); !errors.Is(err, quorum.ErrNotNew) {
		t.Fatalf("MarkNew twice = %v; want ErrNotNew", err)
	}
	if v, _ := s[0].Client().Get(ctx, quorum.TokenKey).Int64(); v != 7000 {
		t.Fatalf("token counter = %d; want the seed 7000", v)
	}
}

// A token from a seeded counter (above 1e14, which Lua writes as 1.8e+15
// when it turns a number into text) is noted beside a fenced lock digit
// for digit, and read back whole.
func TestLargeTokenNotedWhole(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	const seed = 1795463020015000
	if err := n.MarkNew(t.Context(), "run", seed); err != nil {
		t.Fatal(err)
	}
	r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "a", TTL: time.Minute, Round: "g1", Aux: quorum.TokenKey})
	if !r.OK || r.Token != seed+1 {
		t.Fatalf("fenced SetNX = %+v; want token %d", r, seed+1)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRaise, Key: quorum.TokenKey, N: seed + 1, Round: "g1", Aux: "k", Value: "a"}); !r.OK || !r.Noted {
		t.Fatalf("raise = %+v; want the token noted", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRead, Key: "k", Aux: quorum.MetaKey("k")}); r.Entry.Token != seed+1 {
		t.Fatalf("read = %+v; want token %d", r.Entry, seed+1)
	}
}
