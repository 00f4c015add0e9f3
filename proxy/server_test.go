package proxy

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// serve starts a Server over three in-memory backends (the embedded mode's
// miniredis) on a free port; these tests are about the RESP server itself.
func serve(t testing.TB, opts ...Option) (*Server, string) {
	t.Helper()
	var nodes []quorum.Node
	for range 3 {
		m := miniredis.RunT(t)
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: m.Addr()}))
	}
	e, err := quorum.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	s := New(e, append([]Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close(); _ = e.Close() })
	return s, ln.Addr().String()
}

// converse sends raw RESP text and reads n reply lines.
func converse(t *testing.T, addr, send string, n int) []string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(nc, send)
	r := bufio.NewReader(nc)
	lines := make([]string, n)
	for i := range lines {
		if lines[i], err = r.ReadString('\n'); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		lines[i] = strings.TrimRight(lines[i], "\r\n")
	}
	return lines
}

func TestPanicInHandlerAnswersThatCommandOnly(t *testing.T) {
	s, addr := serve(t)
	s.cmds["boom"] = &command{name: "boom", arity: 1, handler: func(c *request, _ [][]byte) {
		c.wr.WriteArray(3) // half a reply, then the panic: it must not reach the client
		panic("broken handler")
	}}
	got := converse(t, addr, "BOOM\r\nPING\r\n", 2)
	if got[0] != "-ERR internal error in 'boom'; the proxy logged it" || got[1] != "+PONG" {
		t.Fatalf("replies = %q", got)
	}
}

func TestCommandLookupIgnoresCase(t *testing.T) {
	_, addr := serve(t)
	got := converse(t, addr, "PiNg\r\necho hi\r\nGeT missing\r\n", 4)
	if got[0] != "+PONG" || got[1] != "$2" || got[2] != "hi" || got[3] != "$-1" {
		t.Fatalf("replies = %q", got)
	}
}

func TestIdleTimeoutClosesConnection(t *testing.T) {
	_, addr := serve(t, WithIdleTimeout(100*time.Millisecond))
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read on an idle connection = %v, want EOF once the idle timeout closed it", err)
	}
}

// TestUnknownCommandText: Redis 7.0.15's text to the byte (clients match on
// it): the quoted arguments fill up to 128 bytes counting quotes and spaces,
// a trailing space, nothing after it, newlines as spaces.
func TestUnknownCommandText(t *testing.T) {
	for _, tt := range []struct {
		args [][]byte
		want string
	}{
		{args("FOO", "a", strings.Repeat("b", 200), "c"), "ERR unknown command 'FOO', with args beginning with: 'a' '" + strings.Repeat("b", 124) + "' "},
		{args("FLUSHALL"), "ERR unknown command 'FLUSHALL', with args beginning with: "},
		{args("foo", "a\nb"), "ERR unknown command 'foo', with args beginning with: 'a b' "},
	} {
		if got := replyText(unknownCommand(tt.args)); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
