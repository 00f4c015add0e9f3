package main

import (
	"context"
	_ "embed"
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

// skewClockSrc is the preload library that runs a redis-server's clocks at
// a rate (testdata/skewclock.c: Debian's libfaketime recurses into the
// jemalloc redis-server links, libfaketime issue #130, and hangs it).
//
//go:embed testdata/skewclock.c
var skewClockSrc []byte

// skewClockLib is the built library, "" until buildSkewClock built it.
var skewClockLib string

// backend is one redis-server process on a fixed loopback port: kill -9
// and restart bring it back empty on the same address, optionally with its
// clocks at a rate (skewclock.c, SKEWCLOCK_RATE=R).
type backend struct {
	addr string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	rate string // the clock rate of the running process, "" for none
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
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+skewClockLib, "SKEWCLOCK_RATE="+rate)
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

// buildSkewClock builds skewclock.c with gcc into dir, then starts a
// throwaway redis-server at 1.5x and checks its clock runs that fast; it
// says why not if anything fails (no gcc, say).
func buildSkewClock(dir string) error {
	src, lib := filepath.Join(dir, "skewclock.c"), filepath.Join(dir, "skewclock.so")
	if err := os.WriteFile(src, skewClockSrc, 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-o", lib, src).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc skewclock.c: %v: %s", err, out)
	}
	skewClockLib = lib
	port, err := freePort()
	if err != nil {
		return err
	}
	b := &backend{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	if err := b.start("1.5", 3*time.Second); err != nil {
		return fmt.Errorf("redis-server does not run with skewclock.so: %v", err)
	}
	defer b.kill()
	c := redis.NewClient(&redis.Options{Addr: b.addr, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	t0, err := c.Time(ctx).Result()
	start := time.Now()
	time.Sleep(400 * time.Millisecond)
	t1, err2 := c.Time(ctx).Result()
	if err != nil || err2 != nil {
		return fmt.Errorf("TIME under skewclock.so: %v %v", err, err2)
	}
	if r := float64(t1.Sub(t0)) / float64(time.Since(start)); r < 1.3 || r > 1.7 {
		return fmt.Errorf("redis-server's clock under skewclock.so at 1.5x ran at %.2fx", r)
	}
	return nil
}
