package e2e

// The redlock-proxy command as a user runs it: the binary built with go
// build (version stamped through -ldflags), started as a process (issue 22).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitLong is how long a process gets to say something: generous, for a
// loaded 2-core machine.
const waitLong = 60 * time.Second

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proxyProcess is the binary running with a clean environment.
type proxyProcess struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{}
	err    error // Wait's, once exited is closed
}

func startProcess(t *testing.T, bin string, env []string, args ...string) *proxyProcess {
	t.Helper()
	p := &proxyProcess{cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// logged waits for a log line matching re and returns its first group.
func (p *proxyProcess) logged(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case <-p.exited:
			if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
				return m[len(m)-1]
			}
			t.Fatalf("the process exited (%v) without logging %s:\n%s", p.err, re, p.stderr)
		case <-deadline:
			t.Fatalf("after %v, no log line %s:\n%s", waitLong, re, p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// exitCode waits for the process to end and returns its exit status.
func (p *proxyProcess) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(waitLong):
		t.Fatalf("still running after %v:\n%s", waitLong, p.stderr)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

var (
	listening     = regexp.MustCompile(`msg="redlock-proxy listening" addr=(\S+)`)
	httpListening = regexp.MustCompile(`msg="http listening: [^"]*" addr=(\S+)`)
)

func TestCommandLine(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "redlock-proxy")
	const pkg = "github.com/redlock-proxy/redlock-proxy/internal/app"
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X "+pkg+".version=v9.9.9-e2e -X "+pkg+".commit=e2ecommit", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("version", func(t *testing.T) {
		out, err := exec.Command(bin, "-version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "redlock-proxy v9.9.9-e2e (commit e2ecommit, go") {
			t.Fatalf("-version: %v: %q", err, out)
		}
		p := startProcess(t, bin, nil, "-listen", "127.0.0.1:0")
		c := redis.NewClient(&redis.Options{Addr: p.logged(t, listening)})
		defer c.Close()
		info, err := c.Info(t.Context(), "server").Result()
		for _, want := range []string{"redis_version:7.0.15\r\n", "redlock_proxy_version:v9.9.9-e2e\r\n", "redlock_proxy_git_sha1:e2ecommit\r\n"} {
			if !strings.Contains(info, want) {
				t.Errorf("INFO server lacks %q: %v\n%s", want, err, info)
			}
		}
	})

	t.Run("probe without a URL", func(t *testing.T) {
		p := startProcess(t, bin, nil, "-probe")
		if code := p.exitCode(t); code != 2 || !strings.Contains(p.stderr.String(), "usage: redlock-proxy -probe URL") ||
			strings.Contains(p.stderr.String(), "not defined") {
			t.Fatalf("-probe alone: exit %d:\n%s", code, p.stderr)
		}
	})

	t.Run("SIGHUP is ignored", func(t *testing.T) {
		p := startProcess(t, bin, nil, "-listen", "127.0.0.1:0")
		c := redis.NewClient(&redis.Options{Addr: p.logged(t, listening)})
		defer c.Close()
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		p.logged(t, regexp.MustCompile(`(SIGHUP ignored)`))
		if err := c.Ping(t.Context()).Err(); err != nil {
			t.Fatalf("PING after SIGHUP: %v\n%s", err, p.stderr)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.exitCode(t); code != 0 {
			t.Fatalf("SIGTERM: exit %d:\n%s", code, p.stderr)
		}
	})

	t.Run("embedded backends serve loopback only", func(t *testing.T) {
		for _, tt := range []struct {
			env  []string
			args []string
			want string
		}{
			{[]string{"REDLOCK_BACKEND=127.0.0.1:7001"}, []string{"-listen", "127.0.0.1:0"}, "unknown environment variable REDLOCK_BACKEND (did you mean REDLOCK_BACKENDS?)"},
			{nil, []string{"-listen", "0.0.0.0:0"}, "REDLOCK_BACKENDS="},
			{nil, imageArgs(t), "REDLOCK_BACKENDS="}, // the Docker image started without backends
		} {
			p := startProcess(t, bin, tt.env, tt.args...)
			if code := p.exitCode(t); code != 2 || !strings.Contains(p.stderr.String(), tt.want) {
				t.Errorf("%v %v: exit %d; want 2 and %q:\n%s", tt.env, tt.args, code, tt.want, p.stderr)
			}
		}
	})

	t.Run("readyz is never ready in embedded mode", func(t *testing.T) {
		p := startProcess(t, bin, nil, "-listen", "127.0.0.1:0", "-http-listen", "127.0.0.1:0")
		p.logged(t, listening)
		base := "http://" + p.logged(t, httpListening)
		get := func(path string) (int, string) {
			ctx, cancel := context.WithTimeout(t.Context(), waitLong)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "embedded") {
			t.Errorf("/readyz in embedded mode: %d %q; want 503 naming the embedded backends", code, body)
		}
		if code, _ := get("/healthz"); code != http.StatusOK {
			t.Errorf("/healthz in embedded mode: %d; want 200 (it serves)", code)
		}
	})

	t.Run("the listener is bound before any backend is dialled", func(t *testing.T) {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		backend, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}) // never answers
		if err != nil {
			t.Fatal(err)
		}
		defer backend.Close()
		p := startProcess(t, bin, nil, "-listen", taken.Addr().String(), "-backends", backend.Addr().String())
		code := p.exitCode(t)
		// A dial the process made is in the listener's queue by now (the
		// kernel completes the handshake): Accept returns it at once.
		_ = backend.SetDeadline(time.Now().Add(2 * time.Second))
		nc, err := backend.Accept()
		if err == nil {
			nc.Close()
		}
		if code != 1 || !strings.Contains(p.stderr.String(), "address already in use") || err == nil {
			t.Fatalf("a listen address in use: exit %d, backend dialled %v; want 1, not dialled, and the error:\n%s", code, err == nil, p.stderr)
		}
	})
}
