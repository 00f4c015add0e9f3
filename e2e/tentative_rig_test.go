package e2e

import (
	"bufio"
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

//go:embed testdata/jumpclock.c
var jumpClockSrc []byte

// jumpServers starts n redis-servers whose wall clock (TIME, key expiry)
// the test steps with set(i, offsetMs).
func jumpServers(t *testing.T, n int) (servers []*redistest.Server, set func(i int, ms int64)) {
	t.Helper()
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "jumpclock.c"), filepath.Join(dir, "jumpclock.so")
	if err := os.WriteFile(src, jumpClockSrc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	files := make([]*os.File, n)
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("off%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		files[i] = f
		t.Cleanup(func() { _ = f.Close() })
		t.Setenv("LD_PRELOAD", lib)
		t.Setenv("JUMPCLOCK_FILE", f.Name())
		servers = append(servers, redistest.Start(t, 1)...)
	}
	t.Setenv("LD_PRELOAD", "")
	set = func(i int, ms int64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(ms))
		if _, err := files[i].WriteAt(b[:], 0); err != nil {
			t.Fatal(err)
		}
	}
	return servers, set
}

// raiseSHA is the SHA1 of the raise script as the backend sends it.
func raiseSHA(t *testing.T) string {
	a, err := os.ReadFile("backend/scripts/tokenpart.lua")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("backend/scripts/raise.lua")
	if err != nil {
		t.Fatal(err)
	}
	s := sha1.Sum(append(a, b...))
	return hex.EncodeToString(s[:])
}

// mitmHook sees each command a proxy sends backend i; it may block (the
// link holds it) and may return a replacement command (nil: as is).
type mitmHook func(i int, args []string) []string

// mitm is a TCP forwarder in front of backend i that hands every command
// to hook before it passes.
func mitm(t *testing.T, i int, backend string, hook mitmHook) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(c, s); _ = c.Close() }()
			go func() {
				defer wg.Done()
				defer s.Close()
				r := bufio.NewReader(c)
				for {
					args, err := readCommand(r)
					if err != nil {
						return
					}
					if rep := hook(i, args); rep != nil {
						args = rep
					}
					if _, err := s.Write(encodeCommand(args)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil // inline
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for j := range n {
		l, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		m, err := strconv.Atoi(strings.TrimSpace(l[1:]))
		if err != nil {
			return nil, err
		}
		b := make([]byte, m+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[j] = string(b[:m])
	}
	return args, nil
}

func encodeCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// raiseOf reads a raise command of the lock whose note is meta: its ARGV
// (token, round, value[, mode]); ok false for any other command.
func raiseOf(args []string, sha, meta string) (argv []string, ok bool) {
	if len(args) < 3 || !strings.EqualFold(args[0], "evalsha") && !strings.EqualFold(args[0], "eval") {
		return nil, false
	}
	if strings.EqualFold(args[0], "evalsha") && args[1] != sha ||
		strings.EqualFold(args[0], "eval") && !strings.Contains(args[1], "Raises counter KEYS[1]") {
		return nil, false
	}
	nk, err := strconv.Atoi(args[2])
	if err != nil || len(args) < 3+nk {
		return nil, false
	}
	keys := args[3 : 3+nk]
	if len(keys) < 5 || keys[4] != meta {
		return nil, false
	}
	return args[3+nk:], true
}

func t0ctx() context.Context { return context.Background() }
