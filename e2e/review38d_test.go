package e2e

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestReview38dStaleBookingOverwriteKeepsItsWindow: SET XX decides its pin
// by whether this connection booked the lock (sessions.roundOf), not by
// whether the lock is still in the round it booked. A session lock its
// holder re-attached through another replica (round R2) is still booked by
// the first connection (round R1) until that replica's next renewal finds
// it moved. SET XX PX with the holder's value from that first connection
// then counts as "from the booking connection": no pin. The lock keeps
// round R2, so the close of the re-attaching connection releases it
// (ReleaseRound R2, no pin) inside the window the overwrite answered OK
// for, and another client takes it. extendLock (PEXPIRE/IFEQ) handles the
// same case by falling back to the pinned Extend when ExtendRound answers
// ErrNotHeld; SET XX has no such fallback.
func TestReview38dStaleBookingOverwriteKeepsItsWindow(t *testing.T) {
	sleepBound(t)
	h := boundHarness(t)
	ctx := t.Context()
	_, addr2 := h.Serve()
	a := oneConn(h)                                                         // replica 1: books R1
	b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 }) // replica 2: re-attaches, R2
	c := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 }) // the thief
	const key = "review38d:setxx:stale"
	if err := a.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 1500, "SESSION").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 1500, "SESSION").Err(); err != nil {
		t.Fatalf("re-attach through replica 2: %v", err)
	}
	if err := a.Do(ctx, "SET", key, "tokA", "XX", "PX", 6000).Err(); err != nil {
		t.Fatalf("SET XX PX 6000 with the holder's value: %v; want OK", err)
	}
	overwritten := time.Now()
	_ = b.Close()                                 // replica 2 releases round R2 at the close
	for time.Since(overwritten) < 4*time.Second { // well inside the 6 s promised
		if ok, err := c.SetNX(ctx, key, "tokC", time.Minute).Result(); err == nil && ok {
			t.Fatalf("another client took the lock %v after SET XX PX 6000 answered OK (first connection's booking stale after a re-attach elsewhere)",
				time.Since(overwritten).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
