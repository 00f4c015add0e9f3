package proxy

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/redcon"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// instantNode answers every operation at once, in the caller's goroutine:
// with it, a benchmark measures the proxy's and the engine's own cost per
// round, without a network.
type instantNode struct{ id int }

func (instantNode) Addr() string                                        { return "instant" }
func (instantNode) Watch(func(quorum.NodeInfo))                         {}
func (instantNode) Keys(context.Context, string, int) ([]string, error) { return nil, nil }
func (n instantNode) Info(context.Context) (quorum.NodeInfo, error) {
	return quorum.NodeInfo{RunID: "instant-" + strconv.Itoa(n.id), Uptime: time.Hour, Intact: true}, nil
}
func (instantNode) Close() error { return nil }
func (instantNode) Record(_ context.Context, ttl time.Duration, _ string, seq int64) (time.Duration, int64, error) {
	return ttl, seq - 1, nil
}
func (instantNode) Counters(context.Context) (map[string]int64, error)                    { return nil, nil }
func (instantNode) Repair(context.Context, string, string, map[string]int64, int64) error { return nil }
func (instantNode) MarkNew(context.Context, string, int64) error                          { return nil }
func (instantNode) Do(op quorum.Op, _ time.Time, done quorum.Done) {
	done.Done(quorum.Reply{OK: true, Entry: quorum.Entry{Found: true, Value: op.Value, TTL: time.Minute}})
}

func benchServer(b *testing.B) (*client, *request) {
	nodes := []quorum.Node{instantNode{1}, instantNode{2}, instantNode{3}, instantNode{4}, instantNode{5}}
	e, err := quorum.New(nodes, quorum.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	s := New(e, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	c := &client{s: s, session: session{authed: true}, ctx: b.Context()}
	return c, c.newRequest(redcon.NewWriter(nil), time.Now())
}

func BenchmarkParseSet(b *testing.B) {
	a := args("lock:a", "tok-123456", "NX", "PX", "30000")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseSet(a, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	c, _ := benchServer(b)
	names := [][]byte{[]byte("set"), []byte("SET"), []byte("Eval"), []byte("evalsha")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if c.s.lookup(names[i%len(names)]) == nil {
			b.Fatal("not found")
		}
	}
}

// BenchmarkDispatchSet is one SET NX PX from dispatch to reply, with a
// whole acquire round over five instant nodes.
func BenchmarkDispatchSet(b *testing.B) {
	c, r := benchServer(b)
	cmds := make([][][]byte, 1024)
	for i := range cmds {
		cmds[i] = args("SET", "lock:"+strconv.Itoa(i), "tok", "NX", "PX", "30000")
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.wr.SetBuffer(r.wr.Buffer()[:0])
		c.dispatch(r, cmds[i%len(cmds)])
	}
}

// BenchmarkDispatchUnlock is the canonical unlock by EVALSHA, with a release
// round over five instant nodes.
func BenchmarkDispatchUnlock(b *testing.B) {
	c, r := benchServer(b)
	cmd := args("EVALSHA", "b70c2384248f88e6b75b9f89241a180f856ad852", "1", "lock:a", "tok")
	b.ReportAllocs()
	for b.Loop() {
		r.wr.SetBuffer(r.wr.Buffer()[:0])
		c.dispatch(r, cmd)
	}
}

// redisEngine is an engine over n real redis-servers, answering acquires
// (the backends vote once their identity is read); it skips the benchmark
// when redis-server is missing.
func redisEngine(b *testing.B, n int) *quorum.Engine {
	b.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server not on PATH")
	}
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(b, n)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	e, err := quorum.New(nodes, quorum.WithQuarantine(false), quorum.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := e.Acquire(b.Context(), "warm", "w", time.Second)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("acquire for 30s: %v", err)
		}
	}
	return e
}

// BenchmarkRoundRedis is one lock's acquire and release over five real
// redis-servers on loopback, one at a time: ns/op is the latency of the two
// rounds, allocs/op the cost the hot path adds to them (issue 27).
func BenchmarkRoundRedis(b *testing.B) {
	e := redisEngine(b, 5)
	b.Run("engine", func(b *testing.B) {
		ctx := b.Context()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			key := "bench:" + strconv.Itoa(i%1024)
			if _, err := e.Acquire(ctx, key, "tok", 30*time.Second); err != nil {
				b.Fatal(err)
			}
			if err := e.Release(ctx, key, "tok"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dispatch", func(b *testing.B) { // SET NX PX and the canonical unlock, from dispatch to reply
		s := New(e, WithLogger(slog.New(slog.DiscardHandler)))
		c := &client{s: s, session: session{authed: true}, ctx: b.Context()}
		r := c.newRequest(redcon.NewWriter(nil), time.Now())
		sets, unlocks := make([][][]byte, 1024), make([][][]byte, 1024)
		for i := range sets {
			key := "dispatch:" + strconv.Itoa(i)
			sets[i] = args("SET", key, "tok", "NX", "PX", "30000")
			unlocks[i] = args("EVALSHA", "b70c2384248f88e6b75b9f89241a180f856ad852", "1", key, "tok")
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.wr.SetBuffer(r.wr.Buffer()[:0])
			c.dispatch(r, sets[i%len(sets)])
			c.dispatch(r, unlocks[i%len(unlocks)])
			if got := string(r.wr.Buffer()); got != "+OK\r\n:1\r\n" {
				b.Fatalf("replies %q", got)
			}
		}
	})
}
