package main

import (
	"bufio"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// env satisfies redistest.TB outside `go test`: failures end the program,
// cleanups run at exit.
type env struct {
	dir      string
	cleanups []func()
}

func newEnv() *env {
	dir, err := os.MkdirTemp("", "redlock-bench-")
	if err != nil {
		log.Fatal(err)
	}
	return &env{dir: dir}
}

func (e *env) Helper()                           {}
func (e *env) Fatalf(format string, args ...any) { e.close(); log.Fatalf(format, args...) }
func (e *env) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *env) TempDir() string {
	d, err := os.MkdirTemp(e.dir, "t")
	if err != nil {
		e.Fatalf("%v", err)
	}
	return d
}

func (e *env) close() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	e.cleanups = nil
	os.RemoveAll(e.dir)
}

// buildProxy compiles the proxy from the module root into the env's folder.
func (e *env) buildProxy(root string) string {
	bin := filepath.Join(e.dir, "redlock-proxy")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Stderr = root, os.Stderr
	if err := cmd.Run(); err != nil {
		e.Fatalf("building the proxy: %v", err)
	}
	return bin
}

// buildProxyAt compiles the proxy as it was at git revision rev, from a
// temporary worktree that is removed again.
func (e *env) buildProxyAt(root, rev string) string {
	src, bin := filepath.Join(e.dir, "baseline-src"), filepath.Join(e.dir, "redlock-proxy-baseline")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			e.Fatalf("git %v: %v", args, err)
		}
	}
	git("worktree", "add", "--detach", src, rev)
	defer git("worktree", "remove", "--force", src)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Stderr = src, os.Stderr
	if err := cmd.Run(); err != nil {
		e.Fatalf("building the proxy at %s: %v", rev, err)
	}
	return bin
}

// proxyProc is a running proxy process.
type proxyProc struct {
	addr string
	cmd  *exec.Cmd
}

// startProxy runs the proxy binary over backends on a free port.
func (e *env) startProxy(bin string, backends []string) *proxyProc {
	return e.startProxyWith(bin, backends)
}

// startBackends starts n redis-servers and returns their addresses.
func (e *env) startBackends(n int) []string { return redistest.Addrs(redistest.Start(e, n)) }

// startProxyWith is startProxy with more command-line arguments.
func (e *env) startProxyWith(bin string, backends []string, extra ...string) *proxyProc {
	// The backends were just started: with restart quarantine on they would
	// not count for max_ttl. This measures throughput, not restarts.
	args := []string{"-backends", strings.Join(backends, ","), "-max-clients", "20000", "-quarantine=false"}
	return e.startServer(bin, "the proxy", append(args, extra...)...)
}

// startServer runs bin -listen ADDR args... on a free port and waits until
// it answers PING; what names it in errors.
func (e *env) startServer(bin, what string, args ...string) *proxyProc {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.Fatalf("%v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-listen", addr}, args...)...)
	if err := cmd.Start(); err != nil {
		e.Fatalf("starting %s: %v", what, err)
	}
	p := &proxyProc{addr: addr, cmd: cmd}
	e.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if line := rawPing(addr); line == "+PONG" || strings.HasPrefix(line, "-NOAUTH") { // up (with users, unauthenticated)
			return p
		}
		if time.Now().After(deadline) {
			e.Fatalf("%s on %s did not answer", what, addr)
		}
	}
}

// rawPing sends an inline PING and returns the reply's first line: plain
// RESP, since go-redis's HELLO handshake fails on servers that answer it
// with +OK (limitproxy does).
func rawPing(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return ""
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// rss is the process's resident set size in bytes.
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	log.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

// raiseFileLimit lets one process hold many client connections.
func raiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// machine describes where the numbers were taken.
func machine() string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		if line, _, ok := strings.Cut(string(data), "\n"); ok {
			mem = strings.Join(strings.Fields(line)[1:], " ")
		}
	}
	out, _ := exec.Command("redis-server", "--version").Output()
	return fmt.Sprintf("%d CPUs (%s), %s memory, %s/%s, %s, %s", runtime.NumCPU(), cpu, mem,
		runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.TrimSpace(string(out)))
}

// moduleRoot is the redlock-proxy module's folder.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return "", fmt.Errorf("run from inside the redlock-proxy module: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
