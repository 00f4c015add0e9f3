package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// These tests reproduce what a security probe found a single hostile client
// could do to the endpoint (issue 11). Each failed on the code before its fix.

// dialRaw opens a raw connection to the proxy, closed at cleanup.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// Finding 1: a declared array count of 2^63-1 (or one that overflows, or
// 2^31-1) before AUTH. Each must be answered with a protocol error and its
// connection closed; the slot it held is free again, so with max_clients 3
// a fourth client gets in after three such packets.
func TestHugeArrayCountsFreeTheirSlots(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.MaxClients, c.RequirePass = 3, "s3cret" })
	for _, count := range []string{"9223372036854775807", "99999999999999999999999", "2147483647"} {
		nc := dialRaw(t, h.addr)
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(nc, "*%s\r\n", count)
		line, _ := bufio.NewReader(nc).ReadString('\n')
		if !strings.HasPrefix(line, "-ERR Protocol error") {
			t.Errorf("*%s answered %q; want a protocol error", count, line)
		}
		_ = nc.Close()
	}
	eventually(t, "every hostile connection's slot freed", func() bool { return h.app.server.Clients() == 0 })
	nc := dialRaw(t, h.addr)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(nc, "PING\r\n")
	if line, _ := bufio.NewReader(nc).ReadString('\n'); !strings.HasPrefix(line, "-NOAUTH") {
		t.Fatalf("an honest client after the hostile ones got %q; want NOAUTH (a free slot)", line)
	}
}

// Finding 2: a large bulk declared, then sent one byte per write. The
// reader must not grow its stack (or anything else) per read.
func TestByteAtATimeBulkCostsNoStack(t *testing.T) {
	h := newHarness(t, 3, nil)
	nc := dialRaw(t, h.addr)
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fmt.Fprint(nc, "*2\r\n$4\r\nECHO\r\n$60000\r\n")
	one := []byte{'x'}
	for i := 0; i < 30000; i++ {
		if _, err := nc.Write(one); err != nil {
			t.Fatalf("write %d: %v (the proxy gave up on a slow but valid client)", i, err)
		}
		if i%64 == 0 {
			time.Sleep(50 * time.Microsecond) // let the proxy read, so that reads stay small
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.StackInuse) - int64(before.StackInuse); grown > 8<<20 {
		t.Fatalf("30000 single-byte writes grew goroutine stacks by %d MiB", grown>>20)
	}
	if err := h.client().Ping(t.Context()).Err(); err != nil {
		t.Fatalf("the proxy stopped serving others: %v", err)
	}
}

// Finding 6: clients that pipeline commands and never read their replies
// held them (and a slot) forever: 50 unauthenticated connections each
// sending 900 KB of "X\r\n" grew the heap to 235 MB; authenticated ones
// pipelining big ECHOs, to 196 MB. Before AUTH a peer gets a few answers,
// then is cut off; after it, a client whose replies cannot be written for
// write_timeout is disconnected and its memory freed.
func TestClientsThatNeverReadAreDisconnected(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.WriteTimeout, c.RequirePass = 500*time.Millisecond, "s3cret" })
	flood := []byte(strings.Repeat("X\r\n", 300000)) // 900 KB of unknown commands
	for range 10 {
		nc := dialRaw(t, h.addr)
		go func() { _, _ = nc.Write(flood) }()
	}
	echo := fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$60000\r\n%s\r\n", strings.Repeat("e", 60000))
	for range 5 {
		nc := dialRaw(t, h.addr)
		go func() {
			_, _ = fmt.Fprint(nc, "AUTH s3cret\r\n")
			for range 200 { // 12 MB of replies nobody reads
				if _, err := fmt.Fprint(nc, echo); err != nil {
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for h.app.server.Clients() > 0 {
		if time.Now().After(deadline) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			t.Fatalf("%d clients that never read are still connected after 30 s (heap %d MiB)", h.app.server.Clients(), m.HeapInuse>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Finding 7: AUTH guessing was free (~880k tries/s on one connection). Each
// failure now pauses that connection longer; eight wrong passwords take
// seconds, and the right one still works afterwards.
func TestWrongAuthIsThrottled(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.RequirePass = "s3cret" })
	c, ctx := h.client(), t.Context()
	start := time.Now()
	cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 8 {
			p.Do(ctx, "auth", "guess")
		}
		return nil
	})
	for _, cmd := range cmds {
		if err := cmd.Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
			t.Fatalf("wrong AUTH = %v", err)
		}
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("8 wrong AUTHs took %v: guessing is not throttled", d)
	}
	if err := c.Do(ctx, "auth", "s3cret").Err(); err != nil {
		t.Fatalf("the right password after failures = %v", err)
	}
}

// Finding 7: one tenant's SCRIPT FLUSH (or thousands of loaded variants)
// made every other tenant's EVALSHA fail with NOSCRIPT.
func TestScriptFlushStaysWithinTheTenant(t *testing.T) {
	alice, bob := twoTenants(t)
	ctx := t.Context()
	handTyped := "if redis.call('get', KEYS[1]) == ARGV[1]\n  then return redis.call('del', KEYS[1])\n  else return 0\nend -- alice's"
	sha, err := alice.ScriptLoad(ctx, handTyped).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.Do(ctx, "script", "flush").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := alice.EvalSha(ctx, sha, []string{"a:lock"}, "tok").Int(); err != nil || n != 0 {
		t.Fatalf("alice's EVALSHA after bob's SCRIPT FLUSH = %d, %v; want 0 (her script is still loaded)", n, err)
	}
}

// Finding 7: /debug/pprof/cmdline showed the command line, passwords included.
func TestPprofHidesTheCommandLine(t *testing.T) {
	saved := os.Args
	os.Args = append([]string{saved[0]}, "-requirepass", "s3cret-pw", "-backends", "redis://:backend-pw@127.0.0.1:1")
	t.Cleanup(func() { os.Args = saved })
	ln, err := servePprof("127.0.0.1:0", newLogger("text", io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	resp, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "pw") {
		t.Fatalf("/debug/pprof/cmdline shows %q", body)
	}
}

// Finding 1: SIGTERM never finished and /healthz, /readyz kept answering
// 200 with the listener closed. Shutdown must end within its grace period
// however clients behave, and health must say so at once.
func TestShutdownEndsWithinGraceAndHealthSaysSo(t *testing.T) {
	h := newHarness(t, 3, func(c *config.Config) { c.HTTPListen = "127.0.0.1:0" })
	base := "http://" + h.app.http.Addr().String()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := httpStatus(t, base+path); code != 200 {
			t.Fatalf("%s = %d before shutdown", path, code)
		}
	}
	hostile := dialRaw(t, h.addr)
	fmt.Fprint(hostile, "*2147483647\r\n")
	slow := dialRaw(t, h.addr)
	fmt.Fprint(slow, "*2\r\n$4\r\nECHO\r\n$100\r\nxx") // half a command, and then nothing
	time.Sleep(100 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done <- h.app.server.Shutdown(ctx)
	}()
	eventually(t, "health reports the closed listener", func() bool {
		return httpStatus(t, base+"/healthz") == 503 && httpStatus(t, base+"/readyz") == 503
	})
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Shutdown with a 1 s grace period still running after 5 s")
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Finding 3: PSUBSCRIBE with patterns like *a*b*...*y<n> and a PUBLISH to a
// huge channel name made the backends spend seconds matching, starving
// every tenant's lock rounds. Client patterns must never reach a backend
// (each backend holds at most the replica's one catch-all pattern), and
// channel names are bounded.
func TestPatternsNeverReachTheBackends(t *testing.T) {
	h := newHarness(t, 3, nil)
	attacker, ctx := h.client(), t.Context()
	var patterns []string
	for n := range 400 {
		patterns = append(patterns, strings.Join(strings.Split("abcdefghijklmnopqrstuvwxy", ""), "*")+fmt.Sprint("*", n))
	}
	ps := attacker.PSubscribe(ctx, patterns...)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range h.backend {
		eventually(t, "the subscriptions settle", func() bool {
			n, err := b.Client().PubSubNumPat(ctx).Result()
			if err == nil && n > 1 {
				t.Fatalf("backend %s matches %d client patterns on every PUBLISH; want at most the replica's one", b.Addr, n)
			}
			return err == nil
		})
	}
	publisher := h.client()
	start := time.Now()
	err := publisher.Publish(ctx, strings.Repeat("a", 50000), "x").Err()
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("PUBLISH to a 50 KB channel name = %v after %v; want refused", err, time.Since(start))
	}
	honest := h.client()
	for i := range 20 {
		s := time.Now()
		if _, err := honest.SetNX(ctx, fmt.Sprint("lock:honest", i), "v", 5*time.Second).Result(); err != nil || time.Since(s) > time.Second {
			t.Fatalf("an honest lock during the attack: %v after %v", err, time.Since(s))
		}
	}
}

// Finding 4: pub/sub ignored key prefixes: a tenant's PSUBSCRIBE * heard
// another tenant's Redisson channel, its PUBLISH reached another tenant's
// waiters, a Spring unlock script published on a foreign channel; and
// Redisson's own channel redisson_lock__channel:{<prefix>lock} was refused.
func TestPubSubIsolatesTenants(t *testing.T) {
	alice, bob := twoTenants(t)
	ctx := t.Context()

	// Redisson's unlock names its channel and latch as keys: they are the
	// lock's, so they are alice's.
	unlock := redissonScript(t, "redisson_unlock.lua")
	if err := alice.Eval(ctx, unlock, []string{"a:lock", "redisson_lock__channel:{a:lock}", "redisson_unlock_latch:{a:lock}:1"},
		0, 30000, "uuid:1", "publish", 1000).Err(); err != nil && err != redis.Nil {
		t.Fatalf("alice's Redisson unlock of her own lock = %v; want nil (not held), never NOPERM", err)
	}
	own := alice.Subscribe(ctx, "redisson_lock__channel:{a:lock}")
	t.Cleanup(func() { _ = own.Close() })
	if _, err := own.Receive(ctx); err != nil {
		t.Fatalf("alice subscribing to her own Redisson channel: %v", err)
	}
	spy := alice.PSubscribe(ctx, "*")
	t.Cleanup(func() { _ = spy.Close() })
	if _, err := spy.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bob.Publish(ctx, "redisson_lock__channel:{b:lock}", "0").Err(); err != nil {
		t.Fatalf("bob publishing on his own channel: %v", err)
	}
	if err := bob.Publish(ctx, "redisson_lock__channel:{a:lock}", "0").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("bob publishing on alice's channel = %v; want NOPERM", err)
	}
	if err := alice.Publish(ctx, "redisson_lock__channel:{a:lock}", "mine").Err(); err != nil {
		t.Fatalf("alice publishing on her own channel: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for {
		msg, err := spy.ReceiveMessage(rctx)
		if err != nil {
			t.Fatalf("alice's PSUBSCRIBE * got nothing, not even her own message: %v", err)
		}
		if strings.Contains(msg.Channel, "{b:") || msg.Payload == "0" {
			t.Fatalf("alice's PSUBSCRIBE * received another tenant's message on %s", msg.Channel)
		}
		if msg.Payload == "mine" {
			break
		}
	}
	foreign := bob.Subscribe(ctx, "a:events")
	t.Cleanup(func() { _ = foreign.Close() })
	if _, err := foreign.Receive(ctx); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("bob subscribing to alice's channel = %v; want NOPERM", err)
	}
	const springReleaseNotify = "7a71e9443a2a41539fb115a5a27d5a748a871aed"
	if err := alice.EvalSha(ctx, springReleaseNotify, []string{"a:lock"}, "owner", "b:registry-channel").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("alice's Spring unlock publishing on bob's channel = %v; want NOPERM", err)
	}
}

// Finding 5: 60k pipelined PUBLISHes took about 65 s to deliver. Each of
// many wake-ups reaches the subscriber once (wake's
// TestDedupCostDoesNotGrowWithHistory holds the cost to account).
func TestManyWakeUpsAreDeliveredOnce(t *testing.T) {
	h := newHarness(t, 3, nil)
	ctx := t.Context()
	sub := h.client().Subscribe(ctx, "lock:events")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 40000
	got := make(chan int, 1)
	go func() {
		ch, count := sub.Channel(redis.WithChannelSize(n)), 0
		for range ch {
			if count++; count == n {
				break
			}
		}
		got <- count
	}()
	pub := h.client()
	start := time.Now()
	for sent := 0; sent < n; sent += 1000 {
		if _, err := pub.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 1000 {
				p.Publish(ctx, "lock:events", fmt.Sprint(sent+i))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case count := <-got:
		t.Logf("%d messages delivered once each in %v", count, time.Since(start))
	case <-time.After(60 * time.Second):
		t.Fatalf("not all of %d messages delivered after 60 s", n)
	}
}

// Finding 7: no limit on subscriptions per client (100k channels grew the
// backends' memory from 1.5 to 24 MB).
func TestSubscriptionsPerClientAreBounded(t *testing.T) {
	h := newHarness(t, 3, nil)
	nc := dialRaw(t, h.addr)
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n$9\r\nSUBSCRIBE\r\n", 2001)
	for i := range 2000 {
		ch := fmt.Sprint("ch", i)
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(ch), ch)
	}
	fmt.Fprint(nc, b.String())
	line, _ := bufio.NewReader(nc).ReadString('\n')
	if !strings.HasPrefix(line, "-ERR too many subscriptions") {
		t.Fatalf("SUBSCRIBE of 2000 channels answered %q; want the limit's error", line)
	}
}

// twoTenants starts a proxy with users alice (prefix a:) and bob (prefix b:)
// and returns a client logged in as each.
func twoTenants(t *testing.T) (alice, bob *redis.Client) {
	h := newHarness(t, 3, func(c *config.Config) {
		c.Users = []config.User{{Name: "alice", Password: "a-pass", Prefix: "a:"}, {Name: "bob", Password: "b-pass", Prefix: "b:"}}
	})
	alice = h.client(func(o *redis.Options) { o.Username, o.Password = "alice", "a-pass" })
	bob = h.client(func(o *redis.Options) { o.Username, o.Password = "bob", "b-pass" })
	return alice, bob
}
