package e2e

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
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
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
	h := harness.New(t, 3, func(c *config.Config) { c.MaxClients, c.RequirePass = 3, "s3cret" })
	for _, count := range []string{"9223372036854775807", "99999999999999999999999", "2147483647"} {
		nc := dialRaw(t, h.Addr)
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(nc, "*%s\r\n", count)
		line, _ := bufio.NewReader(nc).ReadString('\n')
		if !strings.HasPrefix(line, "-ERR Protocol error") {
			t.Errorf("*%s answered %q; want a protocol error", count, line)
		}
		_ = nc.Close()
	}
	harness.Eventually(t, "every hostile connection's slot freed", func() bool { return h.App.Server.Clients() == 0 })
	nc := dialRaw(t, h.Addr)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(nc, "PING\r\n")
	if line, _ := bufio.NewReader(nc).ReadString('\n'); !strings.HasPrefix(line, "-NOAUTH") {
		t.Fatalf("an honest client after the hostile ones got %q; want NOAUTH (a free slot)", line)
	}
}

// Finding 2: a large bulk declared, then sent one byte per write. The
// reader must not grow its stack (or anything else) per read.
func TestByteAtATimeBulkCostsNoStack(t *testing.T) {
	h := harness.New(t, 3, nil)
	nc := dialRaw(t, h.Addr)
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
	if err := h.Client().Ping(t.Context()).Err(); err != nil {
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
	h := harness.New(t, 3, func(c *config.Config) { c.WriteTimeout, c.RequirePass = 500*time.Millisecond, "s3cret" })
	flood := []byte(strings.Repeat("X\r\n", 300000)) // 900 KB of unknown commands
	for range 10 {
		nc := dialRaw(t, h.Addr)
		go func() { _, _ = nc.Write(flood) }()
	}
	echo := fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$60000\r\n%s\r\n", strings.Repeat("e", 60000))
	for range 5 {
		nc := dialRaw(t, h.Addr)
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
	for h.App.Server.Clients() > 0 {
		if time.Now().After(deadline) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			t.Fatalf("%d clients that never read are still connected after 30 s (heap %d MiB)", h.App.Server.Clients(), m.HeapInuse>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Finding 7: AUTH guessing was free (~880k tries/s on one connection). Each
// failure now pauses that connection longer; eight wrong passwords take
// seconds, and the right one still works afterwards.
func TestWrongAuthIsThrottled(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.RequirePass = "s3cret" })
	c, ctx := h.Client(), t.Context()
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
	ln, err := app.ServePprof("127.0.0.1:0", app.NewLogger("text", io.Discard))
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
	h := harness.New(t, 3, func(c *config.Config) { c.HTTPListen = "127.0.0.1:0" })
	base := "http://" + h.App.HTTP.Addr().String()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := httpStatus(t, base+path); code != 200 {
			t.Fatalf("%s = %d before shutdown", path, code)
		}
	}
	hostile := dialRaw(t, h.Addr)
	fmt.Fprint(hostile, "*2147483647\r\n")
	slow := dialRaw(t, h.Addr)
	fmt.Fprint(slow, "*2\r\n$4\r\nECHO\r\n$100\r\nxx") // half a command, and then nothing
	time.Sleep(100 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done <- h.App.Server.Shutdown(ctx)
	}()
	harness.Eventually(t, "health reports the closed listener", func() bool {
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
