package proxy

// Finding of helper-69 on 885af01 (failed on 3b1aa24 too): a re-attach
// whose verdict (answered or not) came later than one TTL after its round
// moved the lock moved it back to a booking dropped at its window's end.
// Fixed: a booking whose renewals fail while a re-attach of its lock is
// under way (or whose owner holds the lock under another round) is kept
// past its window, until a read finds the lock gone.

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// X holds a session lock (ttl 1 s). The client re-attaches it on Y in a
// pipeline behind which a LOCK.ACQUIRE ... WAIT of another, held key blocks
// for longer than the lock's TTL; after 2.5 s the client gives Y up (no
// reply seen). Meanwhile the re-attach's round moved the lock to Y's round,
// Y's booking was renewed, and X's renewals found the lock not held by its
// round: while the re-attach is pending they are skipped (moving), and once
// X's window ended its booking was dropped as lost (an "away" booking is
// dropped at its window's end too). Y's hang-up then moves the lock back to
// X's round, which no booking names any more: nobody renews it, and it
// expires while X, told it holds it and never told otherwise, is open.
func TestReattachPendingPastTheTTLMovesBackToTheHolder(t *testing.T) {
	const ttl = 1000 // ms
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	addr := serveSessions(t, nodes)
	ctx := t.Context()
	x, other, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	if _, err := other.Do(ctx, "LOCK.ACQUIRE", "k2", "someone", 10000).Int64(); err != nil {
		t.Fatal(err)
	}
	y, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = y.Close() })
	pipeline := "*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n1000\r\n$7\r\nSESSION\r\n" +
		"*6\r\n$12\r\nLOCK.ACQUIRE\r\n$2\r\nk2\r\n$2\r\no2\r\n$4\r\n3000\r\n$4\r\nWAIT\r\n$4\r\n5000\r\n"
	if _, err := y.Write([]byte(pipeline)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_ = y.Close() // the client gives Y up, no reply seen
	for end := time.Now().Add(3 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			t.Fatalf("another owner got token %d while X (told token %d, open, no fault) holds the lock: Y's unanswered re-attach, pending past the TTL, "+
				"moved the lock back to X's round after X's booking had been dropped; X's LOCK.TOKEN now %v", tok, token, x.Do(ctx, "LOCK.TOKEN", "k").Val())
		}
		if !errors.Is(err, redis.Nil) {
			t.Fatalf("the thief's LOCK.ACQUIRE: %v", err)
		}
	}
}
