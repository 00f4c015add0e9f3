package proxy

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// slowReads delays, while delay > 0, the next reads of key (one per node,
// counted down in delay) by d, without holding up the node's other ops.
type slowReads struct {
	quorum.Node
	key   string
	delay *atomic.Int32
	d     time.Duration
	seen  chan struct{}
}

func (n slowReads) Do(op quorum.Op, deadline time.Time, done func(quorum.Reply)) {
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

// helper-68: connection X holds a session lock (acquire round A). The
// client re-attaches it on Y1 (round R1, booked) whose token read is slow
// (500 ms on every node, node timeout 2 s: no fault), and meanwhile
// re-attaches on Y2 too (R2, after R1) and gives Y2 up: Y2 hangs up while
// its round is out. Y1 is answered; the client leaves X. Whatever Y2's
// round did, the lock must stay Y1's: X's close must not release it.
// (Failed 2 of 2 on 9ea287d, when a hung-up re-attach handed its round to
// the replica's other bookings, X's included, and X's close released R2.
// Now Y2, unanswered, moves the lock back to R1.)
func TestAbandonedLaterReattachLeavesTheAnsweredOneItsLock(t *testing.T) {
	const ttl = 3000 // ms
	var calls atomic.Int32
	y2moved, y2gone := make(chan struct{}), make(chan struct{})
	var delay atomic.Int32
	hook := func(stage string) {
		if stage != "moved" {
			return
		}
		switch calls.Add(1) {
		case 1: // Y1: its token read (next) is slow on every node
			delay.Store(3)
		case 2: // Y2: its client hangs up while the round is out
			close(y2moved)
			<-y2gone
		}
	}
	reattachHook.Store(&hook)
	t.Cleanup(func() { reattachHook.Store(nil) })

	seen := make(chan struct{}, 16)
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, slowReads{Node: backend.NewNode(&redis.Options{Addr: a}), key: "k", delay: &delay, d: 500 * time.Millisecond, seen: seen})
	}
	addr := serveSessions(t, nodes, quorum.WithNodeTimeout(2*time.Second))
	dial := func() *redis.Client { return dialOne(t, addr, 20*time.Second) }
	ctx := t.Context()
	x, y1, y2, thief := dial(), dial(), dial(), dial()
	token := sessionWhenReady(t, x, "k", "o", ttl)
	_ = y1.Ping(ctx).Err()
	_ = y2.Ping(ctx).Err()
	type answer struct {
		token int64
		err   error
	}
	y1Done, y2Done := make(chan answer, 1), make(chan answer, 1)
	go func() {
		tok, err := y1.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64()
		y1Done <- answer{tok, err}
	}()
	for range 3 { // Y1's token read is out (and held) on every node
		select {
		case <-seen:
		case <-time.After(30 * time.Second):
			t.Fatal("Y1's token read never came")
		}
	}
	go func() {
		tok, err := y2.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64()
		y2Done <- answer{tok, err}
	}()
	select {
	case <-y2moved:
	case <-time.After(5 * time.Second):
		t.Fatal("Y2's round did not end in 5s")
	}
	_ = y2.Close() // the client gives Y2 up
	time.Sleep(100 * time.Millisecond)
	close(y2gone)
	a1 := <-y1Done
	if a1.err != nil || a1.token != token {
		t.Fatalf("Y1's re-attach = %d, %v; want the lock's token %d", a1.token, a1.err, token)
	}
	select {
	case <-y2Done:
	case <-time.After(5 * time.Second):
	}
	_ = x.Close() // answered on Y1: the lock moved there, the client leaves X
	for end := time.Now().Add(2 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while Y1 (answered the re-attach, token %d, open, no fault) holds the lock: X's close or Y2's abandoned round released it", tok, token)
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}
