package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestBadInput(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.MaxRequestSize = 4096; c.MaxTTL = time.Minute })
	c, ctx := h.Client(), t.Context()
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
		{[]any{"set", "k", "v"}, "ERR redlock-proxy takes SET only as a lock command"},
		{[]any{"set", "k", "v", "PX", "1000"}, "ERR redlock-proxy takes SET only as a lock command"},
		{[]any{"flushall"}, "ERR unknown command 'flushall', with args beginning with: "},
		{[]any{"config", "set", "x", "y"}, "ERR unknown command 'config', with args beginning with: 'set' 'x' 'y' "},
		{[]any{"eval", "return 1", "0"}, "ERR unknown script e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
		{[]any{"eval", harness.UnlockScript, "2", "k"}, "ERR Number of keys can't be greater than number of args"},
		{[]any{"eval", harness.UnlockScript, "x", "k"}, "ERR value is not an integer or out of range"},
		{[]any{"eval", harness.UnlockScript, "0"}, "ERR script "},
		{[]any{"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "0"}, "NOSCRIPT No matching script. Please use EVAL."},
		{[]any{"select", "16"}, "ERR DB index is out of range"},
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
	for _, b := range h.Backend {
		if keys := harness.UserKeys(t, b.Client()); len(keys) != 0 {
			t.Fatalf("bad input left keys %q on backend %s", keys, b.Addr)
		}
	}

	raw := func(payload string) string {
		t.Helper()
		nc, err := net.Dial("tcp", h.Addr)
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

// TestRESP2AndRESP3: HELLO switches the wire format; the lock commands answer
// in the client's own, and go-redis works in both.
func TestRESP2AndRESP3(t *testing.T) {
	h := harness.New(t, 3, nil)
	nc, err := net.Dial("tcp", h.Addr)
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
		c := h.Client(func(o *redis.Options) { o.Protocol = proto })
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
		if v, err := c.Eval(ctx, harness.UnlockScript, []string{key}, "tok").Int(); v != 1 || err != nil {
			t.Fatalf("RESP%d unlock = %d, %v", proto, v, err)
		}
		hello, err := c.Do(ctx, "hello", proto).Result()
		if err != nil {
			t.Fatalf("RESP%d HELLO = %v", proto, err)
		}
		// Lettuce's handshake (6.8, RedisHandshake.onHelloResponse) reads
		// id as a Long and mode, version and role as strings.
		if m, ok := hello.(map[any]any); proto == 3 {
			_, id := m["id"].(int64)
			_, mode := m["mode"].(string)
			_, version := m["version"].(string)
			if !ok || m["proto"] != int64(3) || m["role"] != "master" || !id || !mode || !version {
				t.Fatalf("RESP3 HELLO = %#v", hello)
			}
		}
	}
}

// TestNativeCompareCommands: Redis 8.4's SET ... IFEQ and DELEX ... IFEQ and
// Valkey 9's DELIFEQ, as Spring and newer clients send them.
func TestNativeCompareCommands(t *testing.T) {
	h := harness.New(t, 3, nil)
	c, ctx := h.Client(), t.Context()
	if ok, _ := c.SetNX(ctx, "n:k", "v", 5*time.Second).Result(); !ok {
		t.Fatal("acquire failed")
	}
	if got, err := c.Do(ctx, "set", "n:k", "v", "ifeq", "v", "px", "60000").Result(); got != "OK" || err != nil {
		t.Fatalf("SET IFEQ renewal = %v, %v", got, err)
	}
	if pttl := c.PTTL(ctx, "n:k").Val(); pttl < 59*time.Second {
		t.Fatalf("PTTL after the renewal = %v", pttl)
	}
	if err := c.Do(ctx, "set", "n:k", "w", "ifeq", "w", "px", "60000").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("SET IFEQ by a non-owner = %v; want nil", err)
	}
	if err := c.Do(ctx, "set", "n:k", "x", "ifeq", "v", "px", "60000").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR ") {
		t.Fatalf("SET IFEQ changing the owner = %v; want an error", err)
	}
	if n, err := c.Do(ctx, "delex", "n:k", "ifeq", "wrong").Int(); n != 0 || err != nil {
		t.Fatalf("DELEX by a non-owner = %d, %v", n, err)
	}
	if n, err := c.Do(ctx, "delex", "n:k", "ifeq", "v").Int(); n != 1 || err != nil {
		t.Fatalf("DELEX by the owner = %d, %v", n, err)
	}
	c.SetNX(ctx, "n:j", "v", 5*time.Second)
	if n, err := c.Do(ctx, "delifeq", "n:j", "v").Int(); n != 1 || err != nil {
		t.Fatalf("DELIFEQ by the owner = %d, %v", n, err)
	}
	if err := c.Get(ctx, "n:j").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after DELIFEQ the lock is still there: %v", err)
	}
}
