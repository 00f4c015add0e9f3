package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A lock's wait queue lives as long as its longest lease: a waiter leased
// for a short while (a replica with a shorter session_tick, during a
// rolling change of it) queued or beating after one leased for long must
// not cut the queue's life to its own lease. Before, every add and beat
// set the queue's TTL to its own lease: the queue could vanish while the
// first waiter still held its place, and a plain SET NX overtook it.
func TestQueueLivesAsLongAsItsLongestLease(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	ctx := t.Context()
	if r := do(t, n, quorum.Op{Kind: quorum.OpEnqueue, Key: "q", Value: "long", N: 1, TTL: time.Minute}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpEnqueue, Key: "q", Value: "short", N: 2, TTL: 100 * time.Millisecond}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpQueueBeat, Key: "q", Value: "short", TTL: 100 * time.Millisecond}); r.Err != nil {
		t.Fatal(r.Err)
	}
	c := s.Client()
	defer c.Close()
	for _, k := range []string{quorum.QueueKey("q"), quorum.QueueLeaseKey("q")} {
		if ttl, err := c.PTTL(ctx, k).Result(); err != nil || ttl < 30*time.Second {
			t.Errorf("PTTL %s = %v, %v; want the longest lease's (about 1m): waiter long is still queued", k, ttl, err)
		}
	}
}
