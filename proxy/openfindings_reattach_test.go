//go:build openfindings

package proxy

// Open findings of helper-69 on 885af01 (go test -tags openfindings -run
// 'TestReattachReplyLost|TestReplicaStalledAfterTheMove' ./proxy): both
// failed on 3b1aa24 too. A re-attach moves the lock once its reply is
// written to a connection that had not hung up; neither a reply lost on
// its way (a path that drops replies) nor a replica stalled between its
// move and its booking is seen by the proxy, and the holder's first
// connection then loses its lock. Both need the move made two-phase: the
// note keeps the old round beside the new one until the new connection
// shows it was answered (its next command), and renewals by either extend
// the lock.

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// replyBlackhole relays one client connection to addr, passing requests
// and dropping replies (a reply lost on its way, or stuck behind a stalled
// path: the client's read times out before it comes); when the client
// hangs up, it hangs up the proxy side too (its FIN or RST, later).
func replyBlackhole(t *testing.T, addr string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				_ = in.Close()
				continue
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			go func() {
				_, _ = io.Copy(out, in)
				_ = in.Close()
				_ = out.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// X holds a session lock. The client re-attaches it on Y; the reply is lost
// on its way (here: dropped by a relay), the client's read times out (300
// ms) and it gives Y up, relying on X, never told otherwise. The proxy
// wrote the reply to a socket whose peer had not hung up within its 1 ms
// check: "delivered". It unbooked X, and Y's close (when the client's
// hang-up reaches it) releases the lock under X.
func TestReattachReplyLostInFlightCountsAsDelivered(t *testing.T) {
	const ttl = 1500 // ms
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	addr := serveSessions(t, nodes)
	ctx := t.Context()
	x, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	y, err := net.Dial("tcp", replyBlackhole(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.Write([]byte(reattachCmd)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // no reply came: the client's read times out
	_ = y.Close()                      // it gives Y up, relying on X
	yerr := errors.New("no reply in 300 ms")
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open; Y's re-attach never reached the client: %v) holds the lock: "+
				"the reply written to Y's socket counted as delivered", tok, token, yerr)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// X holds a session lock through replica A. The client re-attaches it
// through replica B on Y; B's round moves the lock, and then B stalls
// (SIGSTOP-like: here its re-attach goroutine blocks in the hook, before
// it books the round) for longer than the TTL; the client gives Y up after
// 300 ms. X's booking on A, healthy, renews nothing (the nodes name B's
// round), is kept "away" while its window lasts, and is dropped at its
// end; B's round is booked nowhere. The lock expires while X, on a healthy
// replica, told it holds it and never told otherwise, is open.
func TestReplicaStalledAfterTheMoveLosesTheHoldersLock(t *testing.T) {
	const ttl = 1000 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	a, b := replicaOver(t, addrs, nil), replicaOver(t, addrs, nil)
	warmUp(t, b)
	ctx := t.Context()
	x, thief := dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	stall := make(chan struct{})
	hook := func(stage string) {
		if stage == "moved" {
			select {
			case <-stall:
			case <-time.After(3 * ttl * time.Millisecond):
			}
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	defer close(stall)
	y, err := net.Dial("tcp", b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = y.Close() })
	if _, err := y.Write([]byte("*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n1000\r\n$7\r\nSESSION\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	_ = y.Close() // no reply: the client gives Y up, relying on X
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open on a healthy replica, never told otherwise) holds the lock: "+
				"replica B stalled between its re-attach's move and its move back", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}
