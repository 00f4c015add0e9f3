package proxy

// The re-attach contract (proxy/reattach.go): a session lock moves to the
// connection that re-attached it once that re-attach's round is sent,
// answered or not; the connection renews it while open and releases it at
// its close; a connection it was booked on before neither renews nor
// releases it. Earlier reviews (helpers 68 to 70) tried another contract,
// "an unanswered re-attach moves nothing", and broke each way of undoing a
// move that was tried; the findings that still apply are here.

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// slowReads delays the next delay reads of key on its node by d (each
// signalled on seen).
type slowReads struct {
	quorum.Node
	key   string
	delay *atomic.Int32
	d     time.Duration
	seen  chan struct{}
}

func (n slowReads) Do(op quorum.Op, deadline time.Time, done quorum.Done) {
	if op.Kind == quorum.OpRead && op.Key == n.key && n.delay.Add(-1) >= 0 {
		n.seen <- struct{}{}
		go func() {
			time.Sleep(n.d)
			n.Node.Do(op, deadline, done)
		}()
		return
	}
	n.Node.Do(op, deadline, done)
}

// threeNodes serves a proxy over three redis-servers (extra options after
// serveSessions'), each node wrapped by wrap (nil: none).
func threeNodes(t *testing.T, wrap func(quorum.Node) quorum.Node, extra ...quorum.Option) string {
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		var n quorum.Node = backend.NewNode(&redis.Options{Addr: a})
		if wrap != nil {
			n = wrap(n)
		}
		nodes = append(nodes, n)
	}
	return serveSessions(t, nodes, extra...)
}

// noThief fails the test if another owner gets key within d.
func noThief(t *testing.T, thief *redis.Client, d time.Duration, why string) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(t.Context(), "LOCK.ACQUIRE", "k", "thief", 5000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while %s", tok, why)
		}
		if !errors.Is(err, redis.Nil) && !strings.HasPrefix(err.Error(), "NOQUORUM") { // a loaded machine's slow round takes nothing
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// thiefWithin returns the token another owner gets within d, failing the
// test if it gets none.
func thiefWithin(t *testing.T, thief *redis.Client, d time.Duration, why string) int64 {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		tok, err := thief.Do(t.Context(), "LOCK.ACQUIRE", "k", "thief", 5000).Int64()
		if err == nil {
			return tok
		}
		if time.Now().After(end) {
			t.Fatalf("no other owner got the lock in %v: %s (last: %v)", d, why, err)
		}
	}
}

// A re-attach whose client hangs up before its reply (pipelined behind a
// WAIT that held the reply) moved the lock all the same: the lock is
// released at once at that connection's close, long before its TTL, and
// the connection that held it before releases nothing at its own close
// (the new owner's lock stays). Helper-68 called the release a loss of
// X's lock; under this contract X no longer held it once the re-attach was
// sent.
func TestUnansweredReattachBindsTheLockToItsConnection(t *testing.T) {
	const ttl = 10000 // ms: an expiry would take this long
	addr := threeNodes(t, nil)
	ctx := t.Context()
	x, other, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	sessionWhenReady(t, x, "k", "o", ttl)
	if _, err := other.Do(ctx, "LOCK.ACQUIRE", "k2", "someone", 30000).Int64(); err != nil {
		t.Fatal(err)
	}
	y := dialOne(t, addr, 300*time.Millisecond)
	_ = y.Ping(ctx).Err()
	p := y.Pipeline()
	p.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION")
	p.Do(ctx, "LOCK.ACQUIRE", "k2", "o2", 3000, "WAIT", 5000)
	_, _ = p.Exec(ctx) // times out client-side: go-redis closes the connection
	_ = y.Close()
	thiefWithin(t, thief, 3*time.Second, "the unanswered re-attach's connection closed; its close releases the lock it moved there")
	_ = x.Close()
	time.Sleep(300 * time.Millisecond)
	if n, err := thief.Do(ctx, "LOCK.EXTEND", "k", "thief", 5000).Int64(); err != nil || n != 1 {
		t.Fatalf("the new owner's LOCK.EXTEND after the first holder's close = %d, %v; want 1 (a stale booking released it)", n, err)
	}
}

// helper-70: a re-attach whose replies came back late (after the round's
// wait, within the node timeout: no fault) answers NOQUORUM, but its round
// landed on every node. Its connection books that round: it keeps the lock
// while open (before, nobody booked it and the lock expired under X), and
// releases it at its close.
func TestFailedReattachVerdictBooksItsRound(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	g := newGate(quorum.OpReattach, "k")
	g.late = true // the re-attach runs on each node at once; its replies are late
	a := replicaOver(t, addrs, g)
	ctx := t.Context()
	x, y, thief := dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second)
	sessionWhenReady(t, x, "k", "o", ttl)
	g.close()
	go func() {
		waitFor(t, "the re-attach's ops held", &g.held, 3)
		time.Sleep(150 * time.Millisecond)
		g.release()
	}()
	if _, err := y.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64(); err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("setup: the re-attach with late replies answered %v; want NOQUORUM", err)
	}
	noThief(t, thief, 3*ttl*time.Millisecond, "X and Y, the owner's connections, are open: Y booked the round its failed re-attach landed")
	_ = y.Close()
	thiefWithin(t, thief, 3*time.Second, "Y closed: its close releases the round it booked")
}

// helper-70 (on 7f4a8c3): a re-attach answered late (its reply behind a
// pipelined WAIT), after its owner released the lock and took it anew on
// Z, must not unbook Z: nothing would renew the new lock.
func TestLateAnsweredReattachLeavesTheNewLifeItsBooking(t *testing.T) {
	const ttl = 3000 // ms
	addr := threeNodes(t, nil)
	ctx := t.Context()
	x, z, other, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	sessionWhenReady(t, x, "k", "o", ttl)
	if _, err := other.Do(ctx, "LOCK.ACQUIRE", "k2", "someone", 10000).Int64(); err != nil {
		t.Fatal(err)
	}
	y, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = y.Close() })
	pipeline := "*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n3000\r\n$7\r\nSESSION\r\n" +
		"*6\r\n$12\r\nLOCK.ACQUIRE\r\n$2\r\nk2\r\n$2\r\no2\r\n$4\r\n3000\r\n$4\r\nWAIT\r\n$4\r\n1000\r\n"
	if _, err := y.Write([]byte(pipeline)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n, err := x.Do(ctx, "LOCK.RELEASE", "k", "o").Int64(); err != nil || n != 1 {
		t.Fatalf("setup: LOCK.RELEASE answered %d, %v", n, err)
	}
	fresh, err := z.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64()
	if err != nil {
		t.Fatalf("setup: the new acquire on Z: %v", err)
	}
	_ = y.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = y.Read(make([]byte, 256)) // Y reads its replies
	noThief(t, thief, 2*ttl*time.Millisecond, "Z (granted the lock anew, token "+strconv.FormatInt(fresh, 10)+", open) holds it")
}

// helper-69 (on 885af01): two re-attaches pipelined on Y, the first
// answered an error (its token read timed out), the second the token: Y
// holds the lock while open.
func TestPipelinedReattachErrorThenTokenKeepsTheLock(t *testing.T) {
	const ttl = 1500 // ms
	var delay atomic.Int32
	seen := make(chan struct{}, 16)
	addr := threeNodes(t, func(n quorum.Node) quorum.Node {
		return slowReads{Node: n, key: "k", delay: &delay, d: 600 * time.Millisecond, seen: seen}
	}, quorum.WithNodeTimeout(300*time.Millisecond))
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
	noThief(t, thief, 3*ttl*time.Millisecond, "Y (answered the re-attach, open) holds the lock")
}
