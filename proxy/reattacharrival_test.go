package proxy

// helper-71, finding 2: the re-attach rounds' order puts the generation
// (one past the round the re-attach READ) before the request's arrival, so
// a re-attach that arrived first but whose read ran late (a slow read, a
// paused replica) reads the later re-attach's round and outranks it:
// quorum/reattach.go's reattachRound promises the opposite ("stamped with
// the arrival, not the send, a slow read or a pause cannot make the
// abandoned one the later"). Failed 3 of 3 on 6f63655. Fixed: rounds are
// ordered by arrival first, and a re-attach whose read finds a round that
// arrived after it sends nothing (quorum.ErrSuperseded).

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// X holds a session lock through replica A. The client re-attaches on Y
// through replica B, whose reads of the lock are slow (800 ms, node timeout
// 3 s: no fault); its client sees no reply in 300 ms and, as the contract
// asks, re-attaches again on a live connection, X2 through A: answered the
// lock's token, X2 is what it relies on. Y's read then returns X2's round,
// Y's round is one generation past it and moves every backend from X2, and
// Y books it. X2's booking renews nothing; when the client drops the stale
// Y (after Y's round was sent), Y's close releases the lock and another
// owner takes it while X2, answered and open, holds it.
func TestEarlierReattachWithASlowReadOvertakesTheLaterAnsweredOne(t *testing.T) {
	failingRuns(t, 3, func(i int) string { return slowEarlierReattach(t, i) })
}

func slowEarlierReattach(t *testing.T, run int) string {
	const ttl = 3000 // ms
	addrs := redistest.Addrs(redistest.Start(t, 3))
	var delay atomic.Int32
	seen := make(chan struct{}, 16)
	var bNodes []quorum.Node
	for _, a := range addrs {
		bNodes = append(bNodes, slowReads{Node: backend.NewNode(&redis.Options{Addr: a}), key: "k", delay: &delay, d: 800 * time.Millisecond, seen: seen})
	}
	a := replicaOver(t, addrs, nil)
	b := serveSessions(t, bNodes, quorum.WithNodeTimeout(3*time.Second))
	warm := dialOne(t, b, 20*time.Second)
	sessionWhenReady(t, warm, "warm", "w", ttl) // B's backends vote
	_ = warm.Do(t.Context(), "LOCK.RELEASE", "warm", "w").Err()
	ctx := t.Context()
	x, x2, thief := dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second), dialOne(t, a, 20*time.Second)
	token := sessionWhenReady(t, x, "k", "o", ttl)
	_ = x2.Ping(ctx).Err()

	y, err := net.Dial("tcp", b)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	delay.Store(3) // Y's read of the lock is slow on every node
	if _, err := y.Write([]byte("*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$4\r\n3000\r\n$7\r\nSESSION\r\n")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Fatal("setup: Y's read never came")
		}
	}
	time.Sleep(300 * time.Millisecond) // no reply on Y: the client re-attaches again, on X2
	tok2, err := x2.Do(ctx, "LOCK.ACQUIRE", "k", "o", ttl, "SESSION").Int64()
	if err != nil || tok2 != token {
		t.Fatalf("setup: X2's re-attach = %d, %v; want the lock's token %d", tok2, err, token)
	}
	answered := time.Now()
	// Y stays open a while (the client drops it later), then goes.
	time.Sleep(1500 * time.Millisecond)
	_ = y.Close()
	for end := time.Now().Add(2 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", "k", "thief", 1000).Int64()
		if err == nil {
			return "run " + strconv.Itoa(run) + ": another owner got token " + strconv.FormatInt(tok, 10) + " " +
				time.Since(answered).Round(time.Millisecond).String() + " after X2 (open) was answered its re-attach (token " +
				strconv.FormatInt(token, 10) + "), the later of the client's two: Y's re-attach, sent first, read late, took a higher generation and moved the lock off X2"
		}
	}
	return ""
}
