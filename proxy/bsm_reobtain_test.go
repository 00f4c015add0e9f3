package proxy

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// bsmV10Obtain is bsm/redislock v0.10's obtain script by SHA1
// (scriptbook/scriptfacts.go): KEYS; ARGV value, token length, ms.
const bsmV10Obtain = "eb0c00d98f6f33b4262419a509002884540f30be"

// beforeOverwrite is a backend node that runs hook once, before the first
// overwrite (OpSetXX) any node of the engine is asked to do.
type beforeOverwrite struct {
	*backend.Node
	once *sync.Once
	key  string // of this key only ("" any)
	hook func(key string)
}

func (n beforeOverwrite) Do(op quorum.Op, deadline time.Time, done quorum.Done) {
	if op.Kind == quorum.OpSetXX && (n.key == "" || op.Key == n.key) {
		n.once.Do(func() { n.hook(op.Key) })
	}
	n.Node.Do(op, deadline, done)
}

// TestBsmReobtainNeverOverwritesAnotherOwner: bsm/redislock's re-obtain (a
// held key whose value starts with the caller's token) is atomic in Redis
// (one script: GETRANGE, then MSET). The proxy checks the value holds the
// key (a read and an extend round) and then overwrites it in another round,
// SET XX, "whoever holds it". When the key changes hands between the two
// (the token's earlier holder releases it, a third owner with another
// token takes it), the overwrite replaces the third owner's lock: both it
// and the re-obtaining caller are answered that they hold the key. Here
// the hand-over is made to happen on every backend just before the
// overwrite round; the re-obtain must answer nil and leave the third
// owner's lock alone.
func TestBsmReobtainNeverOverwritesAnotherOwner(t *testing.T) {
	testBsmReobtainHandOver(t, []string{"k"}, "k")
}

// TestBsmReobtainAllOrNone: a re-obtain of two keys where the second passes
// to another owner just before its overwrite answers nil and, as Redis's
// one script would, leaves the first with the value it held: not with the
// caller's new one (which the caller, told it failed, never releases; the
// token's earlier holder, its value replaced, could neither refresh nor
// release it either).
func TestBsmReobtainAllOrNone(t *testing.T) {
	testBsmReobtainHandOver(t, []string{"k1", "k2"}, "k2")
}

func testBsmReobtainHandOver(t *testing.T, keys []string, target string) {
	var (
		minis []*miniredis.Miniredis
		nodes []quorum.Node
		once  sync.Once
	)
	const third = "otherToken-theirs"
	handOver := func(key string) { // the holder released, a third owner acquired
		for _, m := range minis {
			if err := m.Set(key, third); err != nil {
				t.Error(err)
			}
			m.SetTTL(key, time.Minute)
		}
	}
	for range 3 {
		m := miniredis.RunT(t)
		minis = append(minis, m)
		nodes = append(nodes, beforeOverwrite{backend.NewNode(&redis.Options{Addr: m.Addr()}), &once, target, handOver})
	}
	e, err := quorum.New(nodes, quorum.WithQuarantine(false), quorum.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	s := New(e, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close(); _ = e.Close() })
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ReadTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()

	// The token "tokA" holds the key with metadata "-m1".
	// (retried while the fresh engine reads its backends' identities).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		err := c.EvalSha(ctx, bsmV10Obtain, keys, "tokA-m1", 4, 60000).Err()
		if err == nil {
			break
		}
		if !strings.HasPrefix(err.Error(), "NOQUORUM") || time.Now().After(deadline) {
			t.Fatalf("first obtain: %v", err)
		}
	}
	// Re-obtain with the same token, new metadata; the key changes hands
	// just before the overwrite.
	err = c.EvalSha(ctx, bsmV10Obtain, keys, "tokA-m2", 4, 60000).Err()
	if !errors.Is(err, redis.Nil) {
		t.Errorf("re-obtain after %s passed to another owner = %v; want nil", target, err)
	}
	for _, k := range keys {
		want := "tokA-m1"
		if k == target {
			want = third
		}
		// A quorum holds it so (a round answers once a quorum did: a
		// straggler's write may land later).
		held, agree := make([]string, len(minis)), 0
		for i, m := range minis {
			held[i], _ = m.Get(k)
			if held[i] == want {
				agree++
			}
		}
		if agree < len(minis)/2+1 {
			t.Errorf("after the re-obtain the backends hold %s = %q; want %q on a quorum", k, held, want)
		}
	}
}
