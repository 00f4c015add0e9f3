package proxy

// helper-70 (failed on 3b1aa24 and since): the idle timeout was armed only
// when a connection began to read its next command, and not at all while
// it held a session lock. A connection idle with a session lock whose
// booking then left the book by other means than its own command (moved
// by a re-attach elsewhere, lost, force-released) kept no deadline and was
// never idle-closed. Now the booking's leaving re-arms it (client.unheld).

import (
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func TestIdleTimeoutArmedOnceTheSessionLockLeaves(t *testing.T) {
	const ttl = 1000 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	var nodes []quorum.Node
	for _, a := range addrs {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	e, err := quorum.New(nodes, quorum.WithQuarantine(false), quorum.WithLockDelay(0, 0), quorum.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits()
	lim.SessionTick = 250 * time.Millisecond
	lim.IdleTimeout = time.Second
	s := New(e, WithLimits(lim), WithLogger(slog.New(slog.DiscardHandler)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close(); _ = e.Close() })
	a := ln.Addr().String()
	b := replicaOver(t, addrs, nil)
	sessionWhenReady(t, dialOne(t, b, 20*time.Second), "warm", "w", 1500)
	ctx := t.Context()
	raw := func(cmd string) net.Conn {
		nc, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := nc.Write([]byte(cmd)); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 128)
			_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := nc.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			if buf[0] != '-' || time.Now().After(deadline) {
				t.Logf("%q answered %q", cmd, buf[:n])
				return nc
			}
		}
	}
	closedBy := func(nc net.Conn) bool { // EOF (or reset) within 100 ms: the proxy closed it
		_ = nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := nc.Read(make([]byte, 16))
		var ne net.Error
		return err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}
	x := raw("*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n1000\r\n$7\r\nSESSION\r\n")
	y := dialOne(t, b, 20*time.Second)
	if _, err := y.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64(); err != nil {
		t.Fatalf("setup: the re-attach through B: %v", err)
	}
	_ = y.Close()                      // the lock goes with Y: X's booking leaves A's book (lost) by the next ticks
	ctl := raw("*1\r\n$4\r\nPING\r\n") // control: never held a lock
	time.Sleep(4 * time.Second)
	s.native.sessions.mu.Lock()
	booked := len(s.native.sessions.book)
	s.native.sessions.mu.Unlock()
	ctlClosed := closedBy(ctl)
	if !closedBy(x) {
		t.Fatalf("X, idle 4 s (idle_timeout 1 s), is still open, its session lock gone (%d connections booked on A; a control connection idle as long was closed: %v): "+
			"the idle deadline is set only when a read starts, never when a booking leaves", booked, ctlClosed)
	}
}
