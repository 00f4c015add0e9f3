package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// replica is one proxy process (the binary under test) on a fixed loopback
// port, reaching the backends through its own links, so that SIGSTOP
// pauses it for real and kill -9 loses whatever it held in memory.
type replica struct {
	bin  string
	addr string
	args []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// proxySettings are the settings every replica runs with: short locks so
// a restarted backend's quarantine (max_ttl) ends within the run, and
// round timeouts sized for a loaded 2-core machine.
// quarantine is how long a restarted backend is kept out: max_ttl below.
// nativeLockDelay is how long a native lock that expired unreleased stays
// taken, lockDelay a SET NX PX or Redisson lock; the history notes them
// (Op.Delay) so that the checker holds the proxy to them.
const (
	quarantine      = 4 * time.Second
	nativeLockDelay = time.Second
	lockDelay       = 500 * time.Millisecond
)

// An older binary under test gets only the flags its -h lists.
func proxySettings(bin string, oldBootstrap bool) []string {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	all := [][2]string{{"-max-ttl", "4s"}, {"-node-timeout", "1s"}, {"-timeout-factor", "0.5"},
		{"-native-lock-delay", nativeLockDelay.String()}, {"-lock-delay", lockDelay.String()}, {"-health-interval", "200ms"}}
	if oldBootstrap {
		all = append(all, [2]string{"-initial-cluster-state", "new"})
	}
	var s []string
	for _, f := range all {
		if bytes.Contains(out, []byte("  "+f[0]+"\n")) || bytes.Contains(out, []byte("  "+f[0]+" ")) {
			s = append(s, f[0], f[1])
		}
	}
	return s
}

func newReplica(bin, dir string, n int, links []string, oldBootstrap bool) (*replica, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &replica{bin: bin, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		log: filepath.Join(dir, fmt.Sprintf("replica%d.log", n))}
	r.args = append([]string{"-listen", r.addr, "-backends", strings.Join(links, ",")}, proxySettings(bin, oldBootstrap)...)
	return r, r.start()
}

// start runs the binary and waits until it answers PING.
func (r *replica) start() error {
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(r.bin, r.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1, DialTimeout: 300 * time.Millisecond})
	defer c.Close()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			tail, _ := os.ReadFile(r.log)
			if len(tail) > 1500 {
				tail = tail[len(tail)-1500:]
			}
			return fmt.Errorf("replica %s exited at start: %s", r.addr, tail)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			r.mu.Lock()
			r.cmd, r.done = cmd, done
			r.mu.Unlock()
			return nil
		}
	}
	_ = cmd.Process.Kill()
	<-done
	return fmt.Errorf("replica %s did not answer PING in 30s", r.addr)
}

func (r *replica) kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd = nil
	r.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a paused process dies on SIGKILL too, but be plain
		_ = cmd.Process.Kill()
		<-done
	}
}

func (r *replica) restart() error {
	r.kill()
	var err error
	for range 20 {
		if err = r.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func (r *replica) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Signal(sig)
	}
}

// usesOldBootstrap reports whether bin predates the bootstrap subcommand
// (it still has initial_cluster_state, as c1414d4 does).
func usesOldBootstrap(bin string) bool {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	return bytes.Contains(out, []byte("initial-cluster-state"))
}

// bootstrap marks the fresh backends as a new deployment (the operator's
// one-time act) so replicas count them at once; old binaries instead start
// with initial_cluster_state new.
func bootstrap(bin string, addrs []string) error {
	args := append([]string{"bootstrap", "-backends", strings.Join(addrs, ",")}, proxySettings(bin, false)...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s bootstrap: %v: %s", bin, err, out)
	}
	return nil
}

// buildProxy builds this checkout's proxy binary into dir.
func buildProxy(root, dir string) (string, error) {
	bin := filepath.Join(dir, "redlock-proxy")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
}

// repoRoot walks up from the working directory to the directory of go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
