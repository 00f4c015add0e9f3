package proxy

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/tidwall/redcon"

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
func (instantNode) Record(_ context.Context, ttl time.Duration) (time.Duration, error) {
	return ttl, nil
}
func (instantNode) Counters(context.Context) (map[string]int64, error)      { return nil, nil }
func (instantNode) Repair(context.Context, string, map[string]int64) error  { return nil }
func (instantNode) MarkNew(context.Context, string, map[string]int64) error { return nil }
func (instantNode) Do(op quorum.Op, _ time.Time, done func(quorum.Reply)) {
	done(quorum.Reply{OK: true, Entry: quorum.Entry{Found: true, Value: op.Value, TTL: time.Minute}})
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

func BenchmarkRecogniseKnownScript(b *testing.B) {
	var r scriptRegistry
	text := "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := r.recognise("", text); !ok {
			b.Fatal("not recognised")
		}
	}
}

func BenchmarkNormalizeScript(b *testing.B) {
	text := "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nelse\n  return 0\nend\n"
	b.ReportAllocs()
	for b.Loop() {
		_ = normalizeScript(text)
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
