package backend

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// do runs one op on n and waits for its reply.
func do(t *testing.T, n *Node, op quorum.Op) quorum.Reply {
	t.Helper()
	ch := make(chan quorum.Reply, 1)
	n.Do(op, time.Now().Add(5*time.Second), quorum.DoneFunc(func(r quorum.Reply) { ch <- r }))
	return <-ch
}

func newNode(t *testing.T, s *redistest.Server) *Node {
	n := NewNode(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// The node's contract with the engine, against a real redis-server: each op
// answers as quorum.Op documents, a script flushed from the server is sent
// again, a server error reply is a *quorum.ReplyError (the link is fine),
// and a closed node fails what it is given with quorum.ErrClosed.
func TestNodeAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()

	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "a", TTL: time.Minute, Round: "r1", Pad: 2 * time.Millisecond}); !r.OK || r.Err != nil {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "b", TTL: time.Minute, Round: "r2"}); r.OK || r.Err != nil {
		t.Fatalf("SetNX on a held key = %+v; want a plain no", r)
	}
	if err := s.Client().ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRead, Key: "k"}); r.Err != nil || !r.Entry.Found || r.Entry.Value != "a" || r.Entry.TTL <= 0 {
		t.Fatalf("Read after SCRIPT FLUSH = %+v; want a's entry (EVALSHA's NOSCRIPT answered by EVAL)", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpDelIfEq, Key: "k", Value: "a"}); !r.OK {
		t.Fatalf("DelIfEq by the owner = %+v", r)
	}

	// Raise reports the counter before and whether this round wrote it last.
	if err := s.Client().Set(ctx, "tok", "5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRaise, Key: "tok", N: 8, Round: "g1"}); !r.OK || r.N != 5 || r.Own {
		t.Fatalf("first raise = %+v; want OK, before 5, not own", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRaise, Key: "tok", N: 8, Round: "g1"}); !r.OK || r.N != 8 || !r.Own {
		t.Fatalf("second raise by the same round = %+v; want before 8, own", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpRaise, Key: "tok", N: 3, Round: "g2"}); !r.OK || r.N != 8 || r.Own {
		t.Fatalf("raise by another round = %+v; want before 8, not own", r)
	}
	if v := s.Client().Get(ctx, "tok").Val(); v != "8" {
		t.Fatalf("counter = %s after raises to 8 and 3; want 8", v)
	}

	// A server error reply: the op is refused, the link is up.
	if err := s.Client().Set(ctx, "str", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "str", Value: "o", TTL: time.Minute, Round: "h"})
	var rerr *quorum.ReplyError
	if !errors.As(r.Err, &rerr) {
		t.Fatalf("hash acquire on a string key = %+v; want a *quorum.ReplyError (WRONGTYPE)", r)
	}

	_ = n.Close()
	if r := do(t, n, quorum.Op{Kind: quorum.OpRead, Key: "k"}); !errors.Is(r.Err, quorum.ErrClosed) {
		t.Fatalf("op on a closed node = %+v; want ErrClosed", r)
	}
}

// Info reads the server's identity and the markers the engine keeps.
func TestNodeInfo(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	info, err := n.Info(t.Context())
	if err != nil || info.RunID == "" || info.Intact || info.Marked {
		t.Fatalf("Info = %+v, %v; want a run_id, no marker", info, err)
	}
	if err := n.Repair(t.Context(), "other", "gone", map[string]int64{"tok": 3}, 0); !errors.Is(err, quorum.ErrMarkerChanged) {
		t.Fatalf("Repair expecting a marker that is not there = %v; want ErrMarkerChanged", err)
	}
	marker := quorum.NewMarker(info.RunID)
	if err := n.Repair(t.Context(), marker, "", map[string]int64{"tok": 4}, 0); err != nil {
		t.Fatal(err)
	}
	if err := n.Repair(t.Context(), quorum.NewMarker(info.RunID), "", nil, 0); err != nil {
		t.Fatal(err) // another replica's marking of the same run: kept, no error
	}
	if got := s.Client().Get(t.Context(), quorum.IntactKey).Val(); got != marker {
		t.Fatalf("marker %q after a second marking of the same run; want the first, %q", got, marker)
	}
	if info, err = n.Info(t.Context()); err != nil || !info.Intact || !info.Marked {
		t.Fatalf("Info after Repair = %+v, %v; want intact", info, err)
	}
	if c, err := n.Counters(t.Context()); err != nil || c["tok"] != 4 {
		t.Fatalf("Counters = %v, %v; want tok 4", c, err)
	}
}

// TestSetXXIfEqAgainstRedis: an overwrite with IfEq replaces only the value
// it names (bsm's re-obtain); without IfEq, whoever holds the lock.
func TestSetXXIfEqAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: "k", Value: "other", TTL: time.Minute, Round: "r1"}); !r.OK || r.Err != nil {
		t.Fatalf("SetNX = %+v", r)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "tok-m2", IfEq: "tok-m1", TTL: time.Minute, Round: "r2"}); r.OK || r.Err != nil {
		t.Fatalf("SetXX IfEq a value the key does not hold = %+v; want a plain no", r)
	}
	if v, err := s.Client().Get(ctx, "k").Result(); v != "other" || err != nil {
		t.Fatalf("after the refused overwrite k = %q, %v; want other", v, err)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "tok-m2", IfEq: "other", TTL: time.Minute, Round: "r3"}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX IfEq the value held = %+v; want OK", r)
	}
	if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: "k", Value: "anyone", TTL: time.Minute, Round: "r4"}); !r.OK || r.Err != nil {
		t.Fatalf("SetXX without IfEq = %+v; want OK whoever holds it", r)
	}
	if v, err := s.Client().Get(ctx, "k").Result(); v != "anyone" || err != nil {
		t.Fatalf("k = %q, %v; want anyone", v, err)
	}
}
