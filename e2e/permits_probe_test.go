package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview98Probe: odd inputs, each logged; the proxy must answer every
// one (an error is fine) and keep serving.
func TestReview98Probe(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) { c.Users = labUsers })
	app := h.Client(func(o *redis.Options) { o.Username, o.Password = "app", "app-pass" })
	bill := h.Client(func(o *redis.Options) { o.Username, o.Password = "billing", "b-pass" })
	r3 := h.Client(func(o *redis.Options) { o.Username, o.Password, o.Protocol = "app", "app-pass", 3 })
	ctx := context.Background()
	s := &r98Sem{t: t, c: app, name: "probe"}
	s.mustTrySet(2)
	now := time.Now().UnixMilli()
	acq := r98Script(t, r98Acquire)
	keys := []string{"probe", "{probe}:timeout", "redisson_sc:{probe}"}
	type call struct {
		what string
		c    *redis.Client
		sha  string
		keys []string
		args []any
	}
	calls := []call{
		{"count says 2, one id", app, r98Acquire, keys, []any{2, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"count -1", app, r98Acquire, keys, []any{-1, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"count 0", app, r98Acquire, keys, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"count abc", app, r98Acquire, keys, []any{"abc", now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"end before clock", app, r98Acquire, keys, []any{1, now - 5, now, "922337203685477", "PUBLISH", "a"}},
		{"end not a number", app, r98Acquire, keys, []any{1, "x", now, "922337203685477", "PUBLISH", "a"}},
		{"huge lease", app, r98Acquire, keys, []any{1, now + 1<<39, now, "922337203685477", "PUBLISH", "a"}},
		{"no lease", app, r98Acquire, keys, []any{1, "922337203685477", now, "922337203685477", "PUBLISH", "a"}},
		{"4 ARGV", app, r98Acquire, keys, []any{1, now + 5000, now, "922337203685477"}},
		{"2 KEYS", app, r98Acquire, keys[:2], []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"1 KEY", app, r98Acquire, keys[:1], []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"0 KEYS", app, r98Acquire, nil, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"wrong channel", app, r98Acquire, []string{"probe", "{probe}:timeout", "redisson_sc:{other}"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"reserved channel", app, r98Acquire, []string{"probe", "{probe}:timeout", "__redlock:x"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"reserved name", app, r98Acquire, []string{"__redlock:sem:probe", "{probe}:timeout", "redisson_sc:{__redlock:sem:probe}"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"reserved timeouts key", app, r98Acquire, []string{"probe", "__redlock:seml:probe", "redisson_sc:{probe}"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"empty name", app, r98Acquire, []string{"", "{}:timeout", "redisson_sc:{}"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"empty id", app, r98Acquire, keys, []any{1, now + 5000, now, "922337203685477", "PUBLISH", ""}},
		{"129 ids", app, r98Acquire, keys, append([]any{129, now + 5000, now, "922337203685477", "PUBLISH"}, manyIDs(129)...)},
		{"publish cmd is DEL", app, r98Acquire, keys, []any{1, now + 5000, now, "922337203685477", "DEL", "b"}},
		{"release of unknown id", app, r98Release, []string{"probe", "redisson_sc:{probe}", "{probe}:timeout"}, []any{"zzz", 1, now, "PUBLISH"}},
		{"release, no ARGV", app, r98Release, []string{"probe", "redisson_sc:{probe}", "{probe}:timeout"}, nil},
		{"releaseAll count 0", app, r98ReleaseAll, []string{"probe", "redisson_sc:{probe}", "{probe}:timeout"}, []any{0, now, "PUBLISH"}},
		{"set 2^40", app, r98Set, []string{"probe", "redisson_sc:{probe}", "{probe}:timeout"}, []any{int64(1) << 40, "PUBLISH"}},
		{"add x", app, r98Add, []string{"probe", "redisson_sc:{probe}"}, []any{"x", "PUBLISH"}},
		{"trySet -3 other", app, r98TrySet, []string{"probe2", "redisson_sc:{probe2}"}, []any{-3, "PUBLISH"}},
		{"acquire on -3", app, r98Acquire, []string{"probe2", "{probe2}:timeout", "redisson_sc:{probe2}"}, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "a"}},
		{"available on -3", app, r98Available, []string{"probe2", "{probe2}:timeout", "redisson_sc:{probe2}"}, []any{now, "PUBLISH"}},
		{"lease left unknown", app, r98LeaseLeft, keys, []any{"zz", "922337203685477", now, "PUBLISH"}},
		{"lease no lease", app, r98Lease, keys, []any{"zz", "922337203685477", now, "PUBLISH"}},
		{"tenant: own", bill, r98Acquire, []string{"billing:s", "{billing:s}:timeout", "redisson_sc:{billing:s}"}, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"tenant: other's name", bill, r98Acquire, keys, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"tenant: own name, other's channel", bill, r98Acquire, []string{"billing:s", "{billing:s}:timeout", "redisson_sc:{probe}"}, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"tenant: own name, foreign timeouts key", bill, r98Acquire, []string{"billing:s", "probe", "redisson_sc:{billing:s}"}, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"tenant: braces", bill, r98Acquire, []string{"billing:{s}", "{billing:{s}}:timeout", "redisson_sc:billing:{s}"}, []any{0, now + 5000, now, "922337203685477", "PUBLISH"}},
		{"RESP3 refused", r3, r98Acquire, keys, []any{1, now + 5000, now, "922337203685477", "PUBLISH", "c"}},
		{"RESP3 available", r3, r98Available, keys, []any{now, "PUBLISH"}},
	}
	for _, cl := range calls {
		text := r98Script(t, cl.sha)
		var v any
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			v, err = cl.c.Eval(ctx, text, cl.keys, cl.args...).Result()
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no answer in 5s", cl.what)
			continue
		}
		t.Logf("%-40s -> %s", cl.what, r98Show(v, err))
	}
	// EVALSHA after SCRIPT LOAD
	sha, err := app.ScriptLoad(ctx, acq).Result()
	t.Logf("SCRIPT LOAD = %s, %v", sha, err)
	v, err := app.EvalSha(ctx, r98Acquire, keys, 1, time.Now().UnixMilli()+5000, time.Now().UnixMilli(), "922337203685477", "PUBLISH", "d").Result()
	t.Logf("EVALSHA acquire -> %s", r98Show(v, err))
	if err := app.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after the probes: %v", err)
	}
	_ = fmt.Sprint
	_ = strings.Repeat
}

func manyIDs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = r98ID()
	}
	return out
}
