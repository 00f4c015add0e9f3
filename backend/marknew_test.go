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
	if _, err := seen.Record(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := seen.MarkNew(ctx, "run", map[string]int64{quorum.TokenKey: 7000}); !errors.Is(err, quorum.ErrNotNew) {
		t.Fatalf("MarkNew on a recorded server = %v; want ErrNotNew", err)
	}
	if n, _ := s[1].Client().Exists(ctx, quorum.IntactKey, quorum.TokenKey).Result(); n != 0 {
		t.Fatalf("a refused MarkNew wrote %d keys", n)
	}
	if err := n.MarkNew(ctx, "run", map[string]int64{quorum.TokenKey: 7000}); err != nil {
		t.Fatal(err)
	}
	if err := n.MarkNew(ctx, "run", map[string]int64{quorum.TokenKey: 9000}); !errors.Is(err, quorum.ErrNotNew) {
		t.Fatalf("MarkNew twice = %v; want ErrNotNew", err)
	}
	if v, _ := s[0].Client().Get(ctx, quorum.TokenKey).Int64(); v != 7000 {
		t.Fatalf("token counter = %d; want the seed 7000", v)
	}
}
