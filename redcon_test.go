package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
)

func TestLockLifecycle(t *testing.T) {
	h := newHarness(t, 5, nil)
	c, ctx := h.client(), t.Context()

	if ok, err := c.SetNX(ctx, "lock:a", "tok", 30*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	eventually(t, "the lock is not on all 5 backends", func() bool { return h.holders("lock:a", "tok") == 5 })
	if ok, err := c.SetNX(ctx, "lock:a", "other", 30*time.Second).Result(); err != nil || ok {
		t.Fatalf("a second owner got %v, %v; want nil (taken)", ok, err)
	}
	if v, err := c.Get(ctx, "lock:a").Result(); v != "tok" || err != nil {
		t.Fatalf("GET = %q, %v", v, err)
	}
	pttl, err := c.PTTL(ctx, "lock:a").Result()
	if err != nil || pttl <= 29*time.Second || pttl > 30*time.Second {
		t.Fatalf("PTTL = %v, %v; want just under the 30s asked for", pttl, err)
	}
	if n, err := c.Exists(ctx, "lock:a", "lock:none").Result(); n != 1 || err != nil {
		t.Fatalf("EXISTS = %d, %v", n, err)
	}

	if v, err := c.Eval(ctx, extendScript, []string{"lock:a"}, "tok", 60000).Int(); v != 1 || err != nil {
		t.Fatalf("extend = %d, %v", v, err)
	}
	if pttl, _ := c.PTTL(ctx, "lock:a").Result(); pttl <= 59*time.Second {
		t.Fatalf("PTTL after extending to 60s = %v", pttl)
	}
	if v, err := c.Eval(ctx, extendScript, []string{"lock:a"}, "other", 60000).Int(); v != 0 || err != nil {
		t.Fatalf("extend by a non-owner = %d, %v", v, err)
	}

	if v, err := c.Eval(ctx, unlockScript, []string{"lock:a"}, "wrong").Int(); v != 0 || err != nil {
		t.Fatalf("unlock with a wrong value = %d, %v", v, err)
	}
	if n := h.holders("lock:a", "tok"); n != 5 {
		t.Fatalf("a wrong-value unlock removed the lock from %d backends", 5-n)
	}
	if v, err := c.Eval(ctx, unlockScript, []string{"lock:a"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock = %d, %v", v, err)
	}
	if err := c.Get(ctx, "lock:a").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after unlock = %v", err)
	}
	if pttl, _ := c.PTTL(ctx, "lock:a").Result(); pttl != -2 {
		t.Fatalf("PTTL after unlock = %v, want -2", pttl)
	}

	// Expiry, then another owner.
	if ok, _ := c.SetNX(ctx, "lock:b", "first", 200*time.Millisecond).Result(); !ok {
		t.Fatal("short lock not acquired")
	}
	if ok, _ := c.SetNX(ctx, "lock:b", "second", time.Second).Result(); ok {
		t.Fatal("second owner won while the first held the lock")
	}
	time.Sleep(300 * time.Millisecond)
	if ok, err := c.SetNX(ctx, "lock:b", "second", time.Second).Result(); !ok || err != nil {
		t.Fatalf("re-acquire after expiry = %v, %v", ok, err)
	}
	if v, _ := c.Get(ctx, "lock:b").Result(); v != "second" {
		t.Fatalf("GET after re-acquire = %q", v)
	}
}

func TestEvalSHAAndScriptLoad(t *testing.T) {
	h := newHarness(t, 3, nil)
	c, ctx := h.client(), t.Context()
	sha, err := c.ScriptLoad(ctx, extendScript).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ex, _ := c.ScriptExists(ctx, sha, "0000000000000000000000000000000000000000").Result(); !ex[0] || ex[1] {
		t.Fatalf("SCRIPT EXISTS = %v", ex)
	}
	c.SetNX(ctx, "k", "v", time.Second)
	if v, err := c.EvalSha(ctx, sha, []string{"k"}, "v", 5000).Int(); v != 1 || err != nil {
		t.Fatalf("EVALSHA extend = %d, %v", v, err)
	}
	// redis.io's unlock is known by SHA1 before anyone loads it.
	if v, err := c.EvalSha(ctx, "647c65a442733a1aa440f99908d249d13b4d6c4a", []string{"k"}, "v").Int(); v != 1 || err != nil {
		t.Fatalf("EVALSHA of the docs unlock = %d, %v", v, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.EvalSha(ctx, sha, []string{"k"}, "v", 5000).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after SCRIPT FLUSH = %v", err)
	}
}

func TestKilledBackends(t *testing.T) {
	h := newHarness(t, 5, nil)
	c, ctx := h.client(), t.Context()
	for killed := 1; killed <= 2; killed++ {
		h.backend[killed-1].Kill()
		key := fmt.Sprintf("lock:%d-down", killed)
		if ok, err := c.SetNX(ctx, key, "tok", 10*time.Second).Result(); !ok || err != nil {
			t.Fatalf("%d of 5 down: acquire = %v, %v", killed, ok, err)
		}
		if ok, err := c.SetNX(ctx, key, "other", 10*time.Second).Result(); ok || err != nil {
			t.Fatalf("%d of 5 down: contender = %v, %v; want nil", killed, ok, err)
		}
		if v, err := c.Eval(ctx, unlockScript, []string{key}, "tok").Int(); v != 1 || err != nil {
			t.Fatalf("%d of 5 down: unlock = %d, %v", killed, v, err)
		}
	}

	h.backend[2].Kill()
	live := h.backend[3:]
	err := c.SetNX(ctx, "lock:3-down", "tok", 10*time.Second).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM 2/5 acquired, need 3: ") {
		t.Fatalf("3 of 5 down: acquire = %v; want a NOQUORUM error", err)
	}
	for _, b := range h.backend[:3] {
		// "down" once the health monitor saw it die, "connection refused" before.
		if !strings.Contains(err.Error(), b.Addr+": down") && !strings.Contains(err.Error(), b.Addr+": connection refused") {
			t.Errorf("the NOQUORUM reply does not name %s as down or refused: %v", b.Addr, err)
		}
	}
	if anyKey(t, live, "lock:3-down") {
		t.Fatal("a partial key was left on a live backend after NOQUORUM")
	}
	if err := c.Get(ctx, "lock:3-down").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("GET with 3 of 5 down = %v", err)
	}

	// Restarted (empty) backends count again.
	for _, b := range h.backend[:3] {
		b.Restart()
	}
	if ok, err := c.SetNX(ctx, "lock:back", "tok", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("after restarts: acquire = %v, %v", ok, err)
	}
	// The restarted backends, and the flushed ones, have no scripts cached:
	// the engine's EVALSHA meets NOSCRIPT and must reload.
	for _, b := range live {
		b.Client().ScriptFlush(ctx)
	}
	if v, err := c.Eval(ctx, unlockScript, []string{"lock:back"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock on backends without cached scripts = %d, %v", v, err)
	}
	eventually(t, "the unlock left the key on a backend", func() bool { return !anyKey(t, h.backend, "lock:back") })
}

func TestPausedBackend(t *testing.T) {
	const nodeTimeout = 500 * time.Millisecond
	h := newHarness(t, 5, func(c *config.Config) { c.NodeTimeout = nodeTimeout })
	c, ctx := h.client(), t.Context()
	h.backend[0].Pause()
	defer h.backend[0].Resume()

	// Four live backends: the decision comes from them, without the paused one.
	start := time.Now()
	if ok, err := c.SetNX(ctx, "lock:p", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire with one paused = %v, %v", ok, err)
	}
	if el := time.Since(start); el >= nodeTimeout {
		t.Fatalf("acquire waited %v for the paused backend; the quorum was there without it", el)
	}

	// Two live backends hold another value: the round needs the paused
	// backend's vote, waits for it no longer than the node timeout, and fails.
	for _, b := range h.backend[1:3] {
		b.Client().Set(ctx, "lock:q", "other", time.Minute)
	}
	start = time.Now()
	err := c.SetNX(ctx, "lock:q", "tok", 30*time.Second).Err()
	el := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), h.backend[0].Addr+": timeout") {
		t.Fatalf("acquire needing the paused backend = %v; want NOQUORUM naming its timeout", err)
	}
	if el < nodeTimeout || el > nodeTimeout+3*time.Second {
		t.Fatalf("round took %v; want the node timeout %v plus the rollback", el, nodeTimeout)
	}
	if n := h.holders("lock:q", "tok"); n != 0 {
		t.Fatalf("%d live backends kept the failed round's value", n)
	}
}

// TestNoOverlapUnderContention: 200 clients contend on 10 keys; every hold
// interval [acquire reply, min(release send, acquire send + TTL)] is recorded
// on one monotonic clock, and no two owners of one key may overlap.
func TestNoOverlapUnderContention(t *testing.T) {
	const (
		clients = 200
		keys    = 10
		ttl     = 2 * time.Second
		runFor  = 3 * time.Second
	)
	h := newHarness(t, 5, nil)
	c := h.client(func(o *redis.Options) { o.PoolSize = clients; o.MinIdleConns = clients })
	ctx := t.Context()

	type hold struct {
		owner      string
		start, end time.Time
	}
	var (
		mu      sync.Mutex
		holds   = map[string][]hold{}
		errs    []error
		sick    int // NOQUORUM answers: honest under overload, never unsafe
		wg      sync.WaitGroup
		stopAt  = time.Now().Add(runFor)
		retries int
	)
	for i := range clients {
		wg.Go(func() {
			for n := 0; time.Now().Before(stopAt); n++ {
				key := fmt.Sprintf("lock:%d", (i+n)%keys)
				owner := fmt.Sprintf("c%d-%d", i, n)
				sent := time.Now()
				ok, err := c.SetNX(ctx, key, owner, ttl).Result()
				if err != nil && strings.HasPrefix(err.Error(), "NOQUORUM") {
					mu.Lock()
					sick++
					mu.Unlock()
					continue
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if !ok {
					mu.Lock()
					retries++
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				got := time.Now()
				time.Sleep(time.Duration(n%5) * time.Millisecond)
				released := time.Now()
				if err := c.Eval(ctx, unlockScript, []string{key}, owner).Err(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mu.Lock()
				holds[key] = append(holds[key], hold{owner, got, minTime(released, sent.Add(ttl))})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d errors under contention, first: %v", len(errs), errs[0])
	}
	total := 0
	for key, hs := range holds {
		total += len(hs)
		sortHolds(hs, func(a, b hold) bool { return a.start.Before(b.start) })
		for i := 1; i < len(hs); i++ {
			if hs[i].start.Before(hs[i-1].end) {
				t.Errorf("%s: %s held from %v while %s held until %v", key, hs[i].owner, hs[i].start, hs[i-1].owner, hs[i-1].end)
			}
		}
	}
	if total < 50 {
		t.Fatalf("only %d acquisitions in %v: the test proves nothing", total, runFor)
	}
	t.Logf("%d acquisitions, %d taken answers, %d NOQUORUM answers, over %d keys, no overlap", total, retries, sick, len(holds))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func sortHolds[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestPipelineInOrder(t *testing.T) {
	h := newHarness(t, 3, nil)
	c, ctx := h.client(), t.Context()
	pipe := c.Pipeline()
	const n = 40
	sets := make([]*redis.BoolCmd, n)
	echoes := make([]*redis.StringCmd, n)
	gets := make([]*redis.StringCmd, n)
	for i := range n {
		key := fmt.Sprintf("pl:%d", i%7) // repeats: later SETs of a key find it taken
		sets[i] = pipe.SetNX(ctx, key, fmt.Sprint(i), 10*time.Second)
		echoes[i] = pipe.Echo(ctx, fmt.Sprint("e", i))
		gets[i] = pipe.Get(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		wantSet := i < 7
		wantGet := fmt.Sprint(i % 7)
		if sets[i].Val() != wantSet || echoes[i].Val() != fmt.Sprint("e", i) || gets[i].Val() != wantGet {
			t.Fatalf("reply %d out of order: set=%v echo=%q get=%q", i, sets[i].Val(), echoes[i].Val(), gets[i].Val())
		}
	}
}

func TestRedisCLI(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatal("redis-cli not found on PATH: install redis-tools (.ci/run does this)")
	}
	h := newHarness(t, 5, nil)
	host, port, _ := net.SplitHostPort(h.addr)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := cli("SET", "lock:a", "tok", "NX", "PX", "30000"); got != "OK" {
		t.Fatalf("redis-cli acquire: %q", got)
	}
	if got := cli("SET", "lock:a", "other", "NX", "PX", "30000"); got != "" {
		t.Fatalf("redis-cli second owner: %q; want nil (empty)", got)
	}
	if got := cli("EVAL", unlockScript, "1", "lock:a", "tok"); got != "1" {
		t.Fatalf("redis-cli unlock: %q", got)
	}
	if got := cli("PING"); got != "PONG" {
		t.Fatalf("redis-cli PING: %q", got)
	}
	if got := cli("INFO", "replication"); !strings.Contains(got, "role:master") {
		t.Fatalf("redis-cli INFO replication: %q", got)
	}
}

func TestBadInput(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.MaxRequestSize = 4096; c.MaxTTL = time.Minute })
	c, ctx := h.client(), t.Context()
	tests := []struct {
		args []any
		want string // prefix of the error reply
	}{
		{[]any{"get"}, "ERR wrong number of arguments for 'get' command"},
		{[]any{"set", "k"}, "ERR wrong number of arguments for 'set' command"},
		{[]any{"set", "k", "v", "NX", "PX", "abc"}, "ERR value is not an integer or out of range"},
		{[]any{"set", "k", "v", "NX", "PX", "0"}, "ERR invalid expire time in 'set' command"},
		{[]any{"set", "k", "v", "NX", "EX", "-5"}, "ERR invalid expire time in 'set' command"},
		{[]any{"set", "k", "v", "NX", "EX", "9223372036854775807"}, "ERR invalid expire time in 'set' command"},
		{[]any{"set", "k", "v", "NX", "PX", "99999999999999999999"}, "ERR value is not an integer or out of range"},
		{[]any{"set", "k", "v", "NX", "PX", "60001"}, "ERR lock TTL 60001 ms exceeds max_ttl 60000 ms"},
		{[]any{"set", "k", "v", "NX", "PX", "10", "EX", "10"}, "ERR syntax error"},
		{[]any{"set", "k", "v", "NX", "XX", "PX", "10"}, "ERR syntax error"},
		{[]any{"set", "k", "v"}, "ERR redlock-proxy only takes lock writes"},
		{[]any{"set", "k", "v", "PX", "1000"}, "ERR redlock-proxy only takes lock writes"},
		{[]any{"set", "k", "v", "NX"}, "ERR a lock needs a TTL"},
		{[]any{"flushall"}, "ERR unknown command 'flushall', with args beginning with: "},
		{[]any{"config", "set", "x", "y"}, "ERR unknown command 'config', with args beginning with: 'set' 'x' 'y' "},
		{[]any{"eval", "return 1", "0"}, "ERR unknown script e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
		{[]any{"eval", unlockScript, "2", "k"}, "ERR Number of keys can't be greater than number of args"},
		{[]any{"eval", unlockScript, "x", "k"}, "ERR value is not an integer or out of range"},
		{[]any{"eval", unlockScript, "0"}, "ERR script "},
		{[]any{"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "0"}, "NOSCRIPT No matching script. Please use EVAL."},
		{[]any{"select", "1"}, "ERR DB index is out of range"},
		{[]any{"cluster", "slots"}, "ERR This instance has cluster support disabled"},
		{[]any{"hello", "4"}, "NOPROTO unsupported protocol version"},
		{[]any{"client", "tracking", "on"}, "ERR unknown subcommand 'tracking'"},
		{[]any{"auth", "pw"}, "ERR AUTH <password> called without any password configured"},
	}
	for _, tt := range tests {
		err := c.Do(ctx, tt.args...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error starting %q", tt.args, err, tt.want)
		}
	}
	for _, b := range h.backend {
		if n, _ := b.Client().DBSize(ctx).Result(); n != 0 {
			t.Fatalf("bad input left %d keys on backend %s", n, b.Addr)
		}
	}

	raw := func(payload string) string {
		t.Helper()
		nc, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write([]byte(payload)); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(nc)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no reply to %q: %v", payload[:min(len(payload), 40)], err)
		}
		if _, err := r.ReadByte(); err == nil {
			t.Fatalf("connection still open after %q", line)
		}
		return line
	}
	if got := raw("*1\r\n$x\r\n"); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Errorf("malformed RESP: %q", got)
	}
	if got := raw("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + strings.Repeat("v", 8192)); got != "-ERR Protocol error: request larger than max_request_size\r\n" {
		t.Errorf("oversized request: %q", got)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("other connections must keep being served: %v", err)
	}
}

func TestAuth(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.RequirePass = "s3cret" })
	ctx := t.Context()
	anon := h.client()
	if err := anon.Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("PING before AUTH = %v", err)
	}
	if err := anon.Do(ctx, "auth", "wrong").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("AUTH wrong = %v", err)
	}
	// go-redis sends HELLO 3, falls back to AUTH + RESP2 on the error.
	authed := h.client(func(o *redis.Options) { o.Password = "s3cret" })
	if ok, err := authed.SetNX(ctx, "k", "v", time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire after AUTH = %v, %v", ok, err)
	}
	hello := h.client()
	if err := hello.Do(ctx, "hello", "2", "auth", "default", "s3cret", "setname", "me").Err(); err != nil {
		t.Fatalf("HELLO 2 AUTH = %v", err)
	}
}

func TestMaxClients(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.MaxClients = 2 })
	for range 2 {
		nc, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		fmt.Fprint(nc, "PING\r\n")
		if line, _ := bufio.NewReader(nc).ReadString('\n'); line != "+PONG\r\n" {
			t.Fatalf("client within the limit got %q", line)
		}
	}
	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(nc).ReadString('\n'); line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("client over the limit got %q", line)
	}
}

func TestGracefulShutdown(t *testing.T) {
	const nodeTimeout = time.Second
	h := newHarness(t, 5, func(c *config.Config) { c.NodeTimeout = nodeTimeout })
	c, ctx := h.client(), t.Context()
	idle := h.client()
	if err := idle.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// A round that must wait out a paused backend is in flight when shutdown starts.
	for _, b := range h.backend[1:3] {
		b.Client().Set(ctx, "lock:s", "other", time.Minute)
	}
	h.backend[0].Pause()
	defer h.backend[0].Resume()
	reply := make(chan error, 1)
	go func() { reply <- c.SetNX(ctx, "lock:s", "tok", 30*time.Second).Err() }()
	time.Sleep(100 * time.Millisecond)

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.app.server.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-reply; err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("the in-flight round got %v; want its own NOQUORUM reply, delivered before shutdown", err)
	}
	if _, err := net.DialTimeout("tcp", h.addr, time.Second); err == nil {
		t.Fatal("the listener still accepts after Shutdown")
	}
	if err := idle.Ping(ctx).Err(); err == nil {
		t.Fatal("an idle connection survived Shutdown")
	}
	if n := h.holders("lock:s", "tok"); n != 0 {
		t.Fatalf("the shut-down round left its value on %d backends", n)
	}
}

// TestEmbeddedMode is the README's first command: no backends configured.
func TestEmbeddedMode(t *testing.T) {
	h := newHarness(t, 0, nil)
	c, ctx := h.client(), t.Context()
	if got := h.app.engine.Nodes(); got != 5 {
		t.Fatalf("embedded backends = %d, want 5", got)
	}
	if ok, err := c.SetNX(ctx, "lock:a", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	if ok, err := c.SetNX(ctx, "lock:a", "other", 30*time.Second).Result(); ok || err != nil {
		t.Fatalf("second owner = %v, %v", ok, err)
	}
	if v, err := c.Eval(ctx, unlockScript, []string{"lock:a"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock = %d, %v", v, err)
	}
}

// TestRESP2AndRESP3: HELLO switches the wire format; the lock commands answer
// in the client's own, and go-redis works in both.
func TestRESP2AndRESP3(t *testing.T) {
	h := newHarness(t, 3, nil)
	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	exchange := func(send string, lines int) string {
		t.Helper()
		fmt.Fprint(nc, send)
		var b strings.Builder
		for range lines {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("after %q: %v", send, err)
			}
			b.WriteString(line)
		}
		return b.String()
	}
	if got := exchange("GET missing\r\n", 1); got != "$-1\r\n" {
		t.Fatalf("RESP2 null = %q", got)
	}
	if got := exchange("HELLO 3\r\n", 1); got != "%7\r\n" {
		t.Fatalf("HELLO 3 reply starts %q, want a map", got)
	}
	exchange("", 25) // the rest of the map: 7 bulk keys (14 lines) and their values (11 lines)
	if got := exchange("GET missing\r\nSET k a NX PX 5000\r\nSET k b NX PX 5000\r\n", 3); got != "_\r\n+OK\r\n_\r\n" {
		t.Fatalf("RESP3 replies = %q", got)
	}
	if got := exchange("HELLO 2\r\n", 1); got != "*14\r\n" {
		t.Fatalf("HELLO 2 reply starts %q", got)
	}

	for _, proto := range []int{2, 3} {
		c := h.client(func(o *redis.Options) { o.Protocol = proto })
		ctx, key := t.Context(), fmt.Sprint("lock:proto", proto)
		if ok, err := c.SetNX(ctx, key, "tok", 5*time.Second).Result(); !ok || err != nil {
			t.Fatalf("RESP%d acquire = %v, %v", proto, ok, err)
		}
		if ok, err := c.SetNX(ctx, key, "other", 5*time.Second).Result(); ok || err != nil {
			t.Fatalf("RESP%d taken = %v, %v", proto, ok, err)
		}
		if err := c.Get(ctx, "lock:none").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP%d GET missing = %v", proto, err)
		}
		if v, err := c.Eval(ctx, unlockScript, []string{key}, "tok").Int(); v != 1 || err != nil {
			t.Fatalf("RESP%d unlock = %d, %v", proto, v, err)
		}
		hello, err := c.Do(ctx, "hello", proto).Result()
		if err != nil {
			t.Fatalf("RESP%d HELLO = %v", proto, err)
		}
		if m, ok := hello.(map[any]any); proto == 3 && (!ok || m["proto"] != int64(3) || m["role"] != "master") {
			t.Fatalf("RESP3 HELLO = %#v", hello)
		}
	}
}
