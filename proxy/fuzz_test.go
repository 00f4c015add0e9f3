package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// panicCounter counts "command panicked" log records.
type panicCounter struct{ n atomic.Int64 }

func (p *panicCounter) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "command panicked" || r.Message == "connection panicked; closed it" {
		p.n.Add(1)
	}
	return nil
}
func (p *panicCounter) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p *panicCounter) WithGroup(string) slog.Handler      { return p }

// FuzzServeRESP sends arbitrary bytes down a real connection to a proxy
// over embedded backends and checks what comes back: every reply is
// well-formed RESP, every error starts with an upper-case code, no handler
// panics, and the connection ends once the client stops sending.
func FuzzServeRESP(f *testing.F) {
	for _, seed := range []string{
		"PING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*6\r\n$3\r\nSET\r\n$4\r\nlock\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n",
		"SET a b NX PX 100\r\nGET a\r\nPTTL a\r\nEXISTS a b\r\nDEL a\r\n",
		"EVAL \"if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end\" 1 a b\r\n",
		"EVALSHA b70c2384248f88e6b75b9f89241a180f856ad852 1 a b\r\nSCRIPT EXISTS x\r\nSCRIPT FLUSH\r\n",
		"HELLO 2 AUTH default x SETNAME n\r\nHELLO 3\r\nCLIENT SETNAME x\r\nCLIENT GETNAME\r\nCLIENT INFO\r\nSELECT 0\r\n",
		"INFO\r\nCOMMAND COUNT\r\nCOMMAND INFO get set\r\nCOMMAND DOCS\r\nCLUSTER SLOTS\r\nWAIT 0 0\r\nECHO x\r\nQUIT\r\nPING\r\n",
		"*1\r\n$x\r\n", "*-1\r\n", "*2\r\n$3\r\nGET\r\n$-5\r\n", "\"unbalanced\r\n", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI",
		"FLUSHALL\r\nCONFIG SET x y\r\nKEYS *\r\nDEBUG SLEEP 1\r\n",
		"SUBSCRIBE a b\r\nPSUBSCRIBE c*\r\nPING\r\nGET a\r\nUNSUBSCRIBE\r\nPUNSUBSCRIBE\r\nPUBLISH a m\r\n",
		"HELLO 3\r\nSUBSCRIBE a\r\nPUBLISH a m\r\nGET a\r\nUNSUBSCRIBE a\r\n",
		"EVALSHA 149c5a8bf18676fd99e9e6e24923bd64d9b62f94 1 {l} 30000 o:1\r\nHEXISTS {l} o:1\r\nHGET {l} o:1\r\n" +
			"EVALSHA 6866459238a13a701d42f4971f12d9f3a50e2442 3 {l} ch latch 0 30000 o:1 publish 100\r\nGET redisson_lock_token:x\r\n",
		"SET k v XX PX 100\r\nEVALSHA 6a3d31570dc6f4b0bd32bcdc8e75667747c6f635 2 a b 100 o\r\n",
		// What a security probe sent (issue 11): counts and lengths meant to
		// spin, overflow or allocate; quotes and inline lines at the limits.
		"*9223372036854775807\r\n", "*99999999999999999999999\r\n", "*2147483647\r\n",
		"*2\r\n$4\r\nECHO\r\n$1000000\r\nxxxx", "*2\r\n$4\r\nECHO\r\n$9223372036854775807\r\n",
		"*1\r\n$-1\r\n", "*0\r\n", "*1\r\n+PING\r\n", "*1\r\n$4\r\nPING\n", "AUTH guess\r\nAUTH default guess\r\n",
		"SET 'a b' \"c\\td\" NX PX 100\r\n", "X\r\nX\r\nX\r\nX\r\n",
		// bsm/redislock v0.10's multi-key scripts: token lengths and key
		// lists at their edges (duplicates, a reserved key among others).
		"EVALSHA eb0c00d98f6f33b4262419a509002884540f30be 2 a b tok-m 3 30000\r\nEVALSHA eb0c00d98f6f33b4262419a509002884540f30be 2 a a tox-n -1 30000\r\n" +
			"EVALSHA eb0c00d98f6f33b4262419a509002884540f30be 1 a t 99999999999999999999 30000\r\nEVALSHA 5a22d7e8431313862816d4416b5e46dd70fc340d 2 a b tok-m 100\r\n" +
			"EVALSHA 66e1084c2d842a7e8c271925aae90219fac4e129 2 b a tok-m\r\nEVALSHA 9470c810040e272ee6c579d8d4331aaf6332a7b1 3 a b __redlock:token tok-m\r\n",
	} {
		f.Add([]byte(seed))
	}
	var panics panicCounter
	_, addr := serve(f, WithLogger(slog.New(&panics)), WithMaxRequestSize(4096))
	f.Fuzz(func(t *testing.T, input []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write(input); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			// the server may close first, after a protocol error
			if !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "broken pipe") {
				t.Fatal(err)
			}
		}
		_ = nc.(*net.TCPConn).CloseWrite()
		out, err := io.ReadAll(nc)
		if err != nil && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("reading replies to %q: %v (got %q)", input, err, out)
		}
		if err := checkReplies(out); err != nil {
			t.Fatalf("replies to %q are not valid RESP: %v\n%q", input, err, out)
		}
		if n := panics.n.Load(); n > 0 {
			t.Fatalf("%d handler panics so far (see the log); last input %q", n, input)
		}
	})
}

// checkReplies parses a stream of RESP2 replies completely.
func checkReplies(b []byte) error {
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return nil
		}
		if err := checkReply(r, 0); err != nil {
			return err
		}
	}
}

func checkReply(r *bufio.Reader, depth int) error {
	if depth > 8 {
		return errors.New("nested too deep")
	}
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasSuffix(line, "\r\n") || len(line) < 3 && line != "_\r\n" {
		return fmt.Errorf("bad line %q: %v", line, err)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return nil
	case '_': // RESP3 null
		if body != "" {
			return fmt.Errorf("bad null %q", line)
		}
		return nil
	case '-':
		code, _, _ := strings.Cut(body, " ")
		if code == "" || strings.ToUpper(code) != code {
			return fmt.Errorf("error reply without an upper-case code: %q", body)
		}
		return nil
	case ':':
		_, err := strconv.ParseInt(body, 10, 64)
		return err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return fmt.Errorf("bad bulk length %q", body)
		}
		if n == -1 {
			return nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(r, data); err != nil || !bytes.HasSuffix(data, []byte("\r\n")) {
			return fmt.Errorf("bad bulk of %d: %v", n, err)
		}
		return nil
	case '*', '%', '>': // array, RESP3 map (n pairs), RESP3 push
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return fmt.Errorf("bad aggregate length %q", body)
		}
		if kind == '%' {
			n *= 2
		}
		for range n {
			if err := checkReply(r, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", kind)
}
