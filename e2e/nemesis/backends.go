package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// libfaketime is where Debian's faketime package puts the preload library.
const libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

// backend is one redis-server process on a fixed loopback port: kill -9
// and restart bring it back empty on the same address, optionally under
// libfaketime with a clock rate (FAKETIME="+0 xR").
type backend struct {
	addr string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	rate string // the faketime rate of the running process, "" for none
}

func newBackend(dir string) (*backend, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &backend{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	return b, b.start("", 10*time.Second)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start launches redis-server (persistence off) and waits for PING.
func (b *backend) start(rate string, wait time.Duration) error {
	_, port, _ := net.SplitHostPort(b.addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", b.dir, "--logfile", filepath.Join(b.dir, "redis.log"),
		"--protected-mode", "no", "--daemonize", "no")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if rate != "" {
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+libfaketime, "FAKETIME=+0 x"+rate)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{Addr: b.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			return fmt.Errorf("redis-server on %s (rate %q) exited at start", b.addr, rate)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			b.mu.Lock()
			b.cmd, b.done, b.rate = cmd, done, rate
			b.mu.Unlock()
			return nil
		}
	}
	_ = cmd.Process.Kill()
	<-done
	return fmt.Errorf("redis-server on %s (rate %q) did not answer PING in %v", b.addr, rate, wait)
}

// kill sends SIGKILL (a crash: everything is lost) and waits for the exit.
func (b *backend) kill() {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.cmd = nil
	b.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

// restart kills the server and starts it again empty on the same port.
func (b *backend) restart(rate string) error {
	b.kill()
	var err error
	for range 20 { // the port may linger a moment after the kill
		if err = b.start(rate, 10*time.Second); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func (b *backend) signal(sig syscall.Signal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		_ = b.cmd.Process.Signal(sig)
	}
}

// faketimeWorks starts a throwaway redis-server under libfaketime and says
// why not if it does not answer: libfaketime clashes with the jemalloc that
// redis-server links (libfaketime issue #130), and may simply be missing.
func faketimeWorks(dir string) error {
	if _, err := os.Stat(libfaketime); err != nil {
		return fmt.Errorf("%s missing (apt-get install faketime)", libfaketime)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	b := &backend{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	err = b.start("1.005", 3*time.Second)
	b.kill()
	if err != nil {
		return fmt.Errorf("redis-server does not run under libfaketime (it clashes with redis-server's jemalloc, libfaketime issue #130): %v", err)
	}
	return nil
}
