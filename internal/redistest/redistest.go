package redistest

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TB is the part of testing.TB the harness needs, so that benchmarks outside
// `go test` can start servers too.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

var _ TB = testing.TB(nil)

// Server is one redis-server process owned by a test.
type Server struct {
	t    TB
	bin  string
	dir  string
	Addr string // 127.0.0.1:port; kept across restarts

	tls *TLS // nil: plain TCP

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error // receives the process's exit
}

// Start launches n redis-servers with persistence off and registers their
// cleanup. It fails the test with a clear message when redis-server is missing.
func Start(t TB, n int) []*Server {
	t.Helper()
	return start(t, n, nil)
}

// TLS makes servers speak only TLS with these PEM files, requiring client
// certificates signed by CAFile; Client is how the harness itself connects.
type TLS struct {
	CertFile, KeyFile, CAFile string
	Client                    *tls.Config
}

// StartTLS is Start for TLS-only servers.
func StartTLS(t TB, n int, files TLS) []*Server {
	t.Helper()
	return start(t, n, &files)
}

func start(t TB, n int, tlsFiles *TLS) []*Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found on PATH: install it (Debian: apt-get install redis-server redis-tools; .ci/run does this)")
	}
	servers := make([]*Server, n)
	for i := range servers {
		s := &Server{t: t, bin: bin, dir: t.TempDir(), tls: tlsFiles}
		s.startFresh()
		t.Cleanup(s.Kill)
		servers[i] = s
	}
	return servers
}

// Addrs returns the servers' addresses.
func Addrs(servers []*Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Addr
	}
	return out
}

// startFresh picks a free port and starts; it retries if another process
// grabs the port between the probe and redis-server's bind.
func (s *Server) startFresh() {
	s.t.Helper()
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			s.t.Fatalf("redistest: no free port: %v", err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.launch(); lastErr == nil {
			return
		}
	}
	s.t.Fatalf("redistest: redis-server would not start: %v", lastErr)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) launch() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	logPath := filepath.Join(s.dir, "redis.log")
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", logPath, "--protected-mode", "no", "--daemonize", "no"}
	if s.tls != nil {
		args = append(args, "--port", "0", "--tls-port", port, "--tls-cert-file", s.tls.CertFile,
			"--tls-key-file", s.tls.KeyFile, "--tls-ca-cert-file", s.tls.CAFile, "--tls-auth-clients", "yes")
	}
	cmd := exec.Command(s.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("redis-server on %s exited: %v: %s %s", s.Addr, err, stderr.String(), lastLines(log))
		default:
		}
		if ping(s.options()) == nil {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on %s did not answer PING within 10s", s.Addr)
}

// options is how the harness connects to the server.
func (s *Server) options() *redis.Options {
	o := &redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond}
	if s.tls != nil {
		o.TLSConfig = s.tls.Client.Clone()
	}
	return o
}

func ping(o *redis.Options) error {
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return c.Ping(ctx).Err()
}

func lastLines(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Kill stops the server with SIGKILL (losing everything, as a crash does)
// and waits for it to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart starts a killed server again on the same address, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if err := s.launch(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Pause stops the process with SIGSTOP: its socket stays open but nothing answers.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Client returns a go-redis client to this server, closed at cleanup.
func (s *Server) Client() *redis.Client {
	o := s.options()
	o.DialTimeout = 0
	c := redis.NewClient(o)
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}
