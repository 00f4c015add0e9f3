package proxy

// Findings of helper-69 on 885af01: Engine.Unreattach set a node's note
// back to the round the re-attach read, not the one it replaced on that
// node, and a move back ran however stale that round was by then (the
// first test failed on 3b1aa24 too). Fixed: reattach.lua keeps each
// node's replaced round (quorum.PriorKey), and unreattach.lua puts back
// that one, or takes a replaced round out of the chain.

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// gate holds the ops of one kind on one key, on every node it wraps, while
// it is shut; it counts those held and those answered.
type gate struct {
	kind quorum.OpKind
	key  string
	// late: the op runs on the node at once; its reply is held instead.
	late bool

	mu   sync.Mutex
	shut bool
	open chan struct{}

	held, answered atomic.Int32
}

func newGate(kind quorum.OpKind, key string) *gate {
	return &gate{kind: kind, key: key, open: make(chan struct{})}
}

func (g *gate) close() { g.mu.Lock(); g.shut = true; g.mu.Unlock() }

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		g.shut = false
		close(g.open)
	}
}

// waitFor waits until n is at least want.
func waitFor(t *testing.T, what string, n *atomic.Int32, want int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); n.Load() < want; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("setup: %s: %d of %d in 10s", what, n.Load(), want)
		}
	}
}

type gated struct {
	quorum.Node
	g *gate
}

func (n gated) Do(op quorum.Op, deadline time.Time, done func(quorum.Reply)) {
	if op.Kind != n.g.kind || op.Key != n.g.key {
		n.Node.Do(op, deadline, done)
		return
	}
	count := func(r quorum.Reply) { done(r); n.g.answered.Add(1) }
	n.g.mu.Lock()
	shut, open := n.g.shut, n.g.open
	n.g.mu.Unlock()
	if !shut {
		n.Node.Do(op, deadline, count)
		return
	}
	n.g.held.Add(1)
	if n.g.late {
		n.Node.Do(op, deadline, func(r quorum.Reply) {
			go func() { <-open; count(r) }()
		})
		return
	}
	go func() {
		<-open
		n.Node.Do(op, deadline, count)
	}()
}

// replicaOver serves a proxy over addrs, each node behind g (if any).
func replicaOver(t *testing.T, addrs []string, g *gate) string {
	var nodes []quorum.Node
	for _, a := range addrs {
		var n quorum.Node = backend.NewNode(&redis.Options{Addr: a})
		if g != nil {
			n = gated{Node: n, g: g}
		}
		nodes = append(nodes, n)
	}
	return serveSessions(t, nodes, quorum.WithNodeTimeout(5*time.Second))
}

const reattachCmd = "*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n1500\r\n$7\r\nSESSION\r\n"

// rawReattach sends LOCK.ACQUIRE k o 1500 SESSION on a fresh raw
// connection to addr, returned so the test can hang it up.
func rawReattach(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	if _, err := nc.Write([]byte(reattachCmd)); err != nil {
		t.Fatal(err)
	}
	return nc
}

func warmUp(t *testing.T, addr string) {
	t.Helper()
	c := dialOne(t, addr, 20*time.Second)
	sessionWhenReady(t, c, "warm-"+addr, "w", 1500)
}

// X holds a session lock through replica A (acquire round A0). The client
// re-attaches it through replica B on Y1 and, at about the same time (a
// retry on another replica), through A on Y2; Y2 arrives after Y1 but
// reads the lock before Y1's round lands (both read A0: here the reads'
// replies are slow). Y1's round R1 lands and Y1 is answered the token:
// the lock is Y1's; the client leaves X. Y2's round R2 (same generation,
// later arrival: ordered after R1) then lands over R1 on every node, and
// Y2's client hangs up before its reply: Y2's Unreattach sets every node
// naming R2 to Y2's g.Prior, A0, not to R1, the round R2 replaced. X's
// close releases A0: the lock Y1 was answered goes while Y1 is open.
func TestUnreattachRestoresTheOverwrittenRound(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	ga, gb := newGate(quorum.OpRead, "k"), newGate(quorum.OpRead, "k")
	ga.late, gb.late = true, true
	a, b := replicaOver(t, addrs, ga), replicaOver(t, addrs, gb)
	warmUp(t, b)
	ctx := t.Context()
	x, thief := dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)

	var y2 net.Conn
	var calls atomic.Int32
	hook := func(stage string) {
		if stage == "moved" && calls.Add(1) == 2 { // Y2's round moved the lock
			_ = y2.Close()                     // Y2 is given up
			time.Sleep(100 * time.Millisecond) // its hang-up watch sees it
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	ga.close()
	gb.close()
	y1 := dialOne(t, b, 20*time.Second)
	_ = y1.Ping(ctx).Err()
	y1Done := make(chan error, 1)
	var y1Token int64
	go func() {
		var err error
		y1Token, err = y1.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64()
		y1Done <- err
	}()
	waitFor(t, "Y1's reads held", &gb.held, 3) // Y1 read A0
	time.Sleep(20 * time.Millisecond)          // Y2 arrives later
	y2 = rawReattach(t, a)
	waitFor(t, "Y2's reads held", &ga.held, 3) // Y2 read A0 too, before Y1's round
	gb.release()
	if err := <-y1Done; err != nil || y1Token != token {
		t.Fatalf("setup: Y1's re-attach answered %d, %v; want the lock's token %d", y1Token, err, token)
	}
	dumpNotes(t, addrs, "after Y1")
	ga.release()
	for deadline := time.Now().Add(10 * time.Second); calls.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("setup: Y2's round did not move the lock")
		}
	}
	time.Sleep(400 * time.Millisecond) // Y2's move back
	reattachHook.Store(nil)
	dumpNotes(t, addrs, "after Y2")
	_ = x.Close() // answered on Y1: the client leaves X
	for end := time.Now().Add(2 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while Y1 (answered the re-attach, token %d, open, no fault) holds the lock: "+
				"Y2's unanswered round, which overtook Y1's, moved the nodes back to the round it read (X's), and X's close released it", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// X holds a session lock through replica A (round A0). The client
// re-attaches it through replica B on Y1 (R1) and hangs Y1 up once R1
// moved the lock: Y1's move back (R1 -> A0) is slow to reach the nodes.
// Meanwhile the client re-attaches through A on Y2, which reads R1 (its
// prior) and moves the nodes to R2, and hangs Y2 up too. Y1's move back
// lands first and finds R2 (moves nothing); Y2's then sets R2 back to R1,
// a round whose only booking Y1's move back dropped. Neither re-attach was
// answered: X holds the lock, open, never told otherwise, yet nobody renews
// the round the nodes name, and it expires under X.
func TestChainedMoveBacksLandOnABookedRound(t *testing.T) {
	const ttl = 1500 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	ga, gb := newGate(quorum.OpUnreattach, "k"), newGate(quorum.OpUnreattach, "k")
	a, b := replicaOver(t, addrs, ga), replicaOver(t, addrs, gb)
	warmUp(t, b)
	ctx := t.Context()
	x, thief := dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)

	var y1, y2 net.Conn
	var calls atomic.Int32
	hook := func(stage string) {
		if stage != "moved" {
			return
		}
		switch calls.Add(1) {
		case 1:
			_ = y1.Close()
		case 2:
			_ = y2.Close()
		}
		time.Sleep(100 * time.Millisecond) // its hang-up watch sees it
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })
	ga.close()
	gb.close()
	y1 = rawReattach(t, b)
	waitFor(t, "Y1's move back held", &gb.held, 3)
	y2 = rawReattach(t, a)
	waitFor(t, "Y2's move back held", &ga.held, 3)
	gb.release()
	waitFor(t, "Y1's move back answered", &gb.answered, 3)
	ga.release()
	waitFor(t, "Y2's move back answered", &ga.answered, 3)
	reattachHook.Store(nil)
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open, no fault; both re-attaches unanswered) holds the lock: "+
				"Y2's move back restored Y1's round, which Y1's own move back had already dropped", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}

// dumpNotes logs key k, its PTTL and its note on each backend.
func dumpNotes(t *testing.T, addrs []string, what string) {
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		v, _ := c.Get(t.Context(), "k").Result()
		n, _ := c.Get(t.Context(), quorum.MetaKey("k")).Result()
		p, _ := c.PTTL(t.Context(), "k").Result()
		t.Logf("%s %s: k=%q pttl=%v note=%q", what, a, v, p, n)
		_ = c.Close()
	}
}
