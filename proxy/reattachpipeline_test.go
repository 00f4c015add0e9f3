package proxy

// Findings of helper-69 on 885af01: two re-attaches of one lock pipelined
// on one connection. Each request's afterReply judged "its own" booking by
// what it read when it started, and they ran in request order: the first
// one's moveBack dropped (or its sibling's rebooked) the booking the other
// re-attach made. (The first test passed on 3b1aa24, the second failed
// there too.) Fixed: afterReply runs the last first, and a move back
// changes the connection's booking only while it names its own round.

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Connection X holds a session lock. The client pipelines two re-attaches
// of it on Y. The first one's token read times out on every node (slow
// reads, no fault in the lock): it answers NOQUORUM; the second is
// answered the lock's token. Y was answered the lock: it must hold it
// while it is open. The first request's moveBack (had=false: Y had nothing
// booked when it started) drops Y's booking, which by then is the second
// re-attach's; the second's afterReply then unbooks X. Nobody renews the
// lock; it expires under Y.
func TestPipelinedReattachErrorThenTokenKeepsTheAnsweredBooking(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	var delay atomic.Int32
	seen := make(chan struct{}, 16)
	var nodes []quorum.Node
	for _, a := range addrs {
		nodes = append(nodes, slowReads{Node: backend.NewNode(&redis.Options{Addr: a}), key: "k", delay: &delay, d: 600 * time.Millisecond, seen: seen})
	}
	addr := serveSessions(t, nodes, quorum.WithNodeTimeout(300*time.Millisecond))
	var calls atomic.Int32
	hook := func(stage string) {
		if stage == "moved" && calls.Add(1) == 1 {
			delay.Store(3) // the first re-attach's token read times out on every node
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	ctx := t.Context()
	x, y, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	_ = y.Ping(ctx).Err()
	p := y.Pipeline()
	first := p.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION")
	second := p.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION")
	_, _ = p.Exec(ctx)
	if err := first.Err(); err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("setup: the first re-attach answered %v; want NOQUORUM (its token read timed out)", first.Val())
	}
	if got, err := second.Int64(); err != nil || got != token {
		t.Fatalf("setup: the second re-attach answered %d, %v; want the lock's token %d", got, err, token)
	}
	reattachHook.Store(nil)
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while Y (answered the re-attach, token %d, open, no fault) holds the lock: "+
				"the first pipelined re-attach's moveBack dropped the booking the second made, and the second unbooked X", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// The same pipeline, both re-attaches unanswered: the client hangs Y up
// once the second one's round moved the lock. The moveBacks run in request
// order: the first drops Y's booking (the second's) and finds the note
// naming the second's round (moves nothing back); the second rebooks what Y
// had when it started (the FIRST re-attach's booking, itself unanswered) and
// moves the note back to the first's round. Y's close then releases the
// lock (its round is the note's), while X, the holder never told
// otherwise, is open.
func TestPipelinedReattachesHungUpLeaveTheHolderItsLock(t *testing.T) {
	const ttl = 1500 // ms
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	addr := serveSessions(t, nodes)
	ctx := t.Context()
	x, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)

	y, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = y.Close() })
	var calls atomic.Int32
	hook := func(stage string) {
		if stage == "moved" && calls.Add(1) == 2 {
			_ = y.Close()                      // the client gives Y up once the second round moved the lock
			time.Sleep(100 * time.Millisecond) // Y's hang-up watch sees it
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	cmd := "*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n1500\r\n$7\r\nSESSION\r\n"
	if _, err := y.Write([]byte(cmd + cmd)); err != nil {
		t.Fatal(err)
	}
	_, _ = bufio.NewReader(y).ReadString('\n') // returns once Y is closed
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if calls.Load() < 2 {
		t.Fatalf("setup: %d re-attach rounds moved the lock; want 2", calls.Load())
	}
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open, no fault) holds the lock: both of Y's pipelined re-attaches "+
				"were unanswered, yet Y's close released it (the second's moveBack rebooked the first's unanswered round on Y and moved the note to it); X's LOCK.TOKEN now %v",
				tok, token, x.Do(ctx, "LOCK.TOKEN", "k").Val())
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}
