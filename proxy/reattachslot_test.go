package proxy

// helper-71, finding 1: a re-attach whose client hung up BEFORE its round
// was sent moves the lock all the same, when the round waited for the
// lock's (key, owner) slot (quorum.Engine.startTimed's keys.lock) behind
// another round of the same owner: Engine.reattach checks ctx.Err() before
// calling extend, but extend runs under context.WithoutCancel, so the slot
// wait cannot be cancelled and the round is sent after the hang-up.
// Failed 3 of 3 on 6f63655. Fixed: the slot is waited for with the
// request's context, checked again once held (startTimed).

import (
	"errors"
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

// X holds a session lock (answered its token, stays open). The client
// sends a re-attach on Y and hangs Y up while Y's round still waits for the
// (k, o) slot, held by the owner's own LOCK.EXTEND on Z (its round slow on
// its way: 300 ms, within the node timeout). The contract: "only a client
// that hangs up before the round is sent moves nothing". Here the round is
// sent once Z's extend ends, moves the lock to Y, unbooks X, and Y's close
// releases it: another owner takes the lock while X, answered and open,
// holds it.
func TestReattachHungUpWhileWaitingForTheSlotMovesNothing(t *testing.T) {
	failingRuns(t, 3, func(i int) string { return hungUpWhileWaitingForSlot(t, i) })
}

func hungUpWhileWaitingForSlot(t *testing.T, run int) string {
	const ttl = 10000 // ms: an expiry would take this long
	key := "k"
	reads := newGate(quorum.OpRead, key)
	extends := newGate(quorum.OpPExpireIfEq, key)
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		var n quorum.Node = backend.NewNode(&redis.Options{Addr: a})
		n = gated{Node: gated{Node: n, g: reads}, g: extends}
		nodes = append(nodes, n)
	}
	addr := serveSessions(t, nodes, quorum.WithNodeTimeout(5*time.Second))
	var movedAt atomic.Int64
	hook := func(stage string) {
		if stage == "moved" {
			movedAt.Store(time.Now().UnixNano())
		}
	}
	reattachHook.Store(&hook)
	defer reattachHook.Store(nil)
	ctx := t.Context()
	x, thief := dialOne(t, addr, 20*time.Second), dialOne(t, addr, 20*time.Second)
	token := sessionWhenReady(t, x, key, "o", ttl)

	// Y's re-attach: its read is held (so it is past its acquire).
	reads.close()
	y, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if _, err := y.Write([]byte("*5\r\n$12\r\nLOCK.ACQUIRE\r\n$1\r\nk\r\n$1\r\no\r\n$5\r\n10000\r\n$7\r\nSESSION\r\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Y's read held", &reads.held, 3)

	// The owner's LOCK.EXTEND on Z takes the (k, o) slot; its round is slow.
	extends.close()
	zDone := make(chan error, 1)
	go func() {
		n, err := x.Do(ctx, "LOCK.EXTEND", key, "o", ttl).Int64()
		if err == nil && n != 1 {
			err = errors.New("LOCK.EXTEND answered " + strconv.FormatInt(n, 10))
		}
		zDone <- err
	}()
	waitFor(t, "Z's extend held", &extends.held, 3)

	reads.release()                    // Y reads the lock, then waits for the slot
	time.Sleep(100 * time.Millisecond) // Y is in keys.lock
	if movedAt.Load() != 0 {
		t.Fatalf("setup: Y's round was sent before its client hung up")
	}
	_ = y.Close() // the client hangs up: no round of Y's was sent yet
	hungUp := time.Now()
	time.Sleep(100 * time.Millisecond) // the proxy's hang-up watch sees it
	extends.release()                  // Z's extend ends; the slot frees
	if err := <-zDone; err != nil {
		t.Fatalf("setup: X's LOCK.EXTEND: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if movedAt.Load() == 0 {
		return "" // Y's round was not sent: what the contract asks
	}
	after := time.Unix(0, movedAt.Load()).Sub(hungUp).Round(time.Millisecond)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		tok, err := thief.Do(ctx, "LOCK.ACQUIRE", key, "thief", 1000).Int64()
		if err == nil {
			return "run " + strconv.Itoa(run) + ": another owner got token " + strconv.FormatInt(tok, 10) +
				" while X (answered token " + strconv.FormatInt(token, 10) + " and LOCK.EXTEND 1, open) holds the lock: Y's re-attach, whose client hung up while its round waited for the (key, owner) slot, was sent " + after.String() + " after the hang-up all the same, moved the lock to Y and unbooked X, and Y's close released it"
		}
	}
	return ""
}
