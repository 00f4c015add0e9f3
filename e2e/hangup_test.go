package e2e

// A waiter that hangs up leaves the lock's queue at once, whatever it sent
// while it waited (issue 23, E2).

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestHungUpWaiterWithStrayBytesLeavesTheQueue: a raw connection sends
// LOCK.ACQUIRE ... WAIT, then one more byte (the start of a next command)
// and hangs up. It must leave every backend's queue long before its wait
// or the holder's TTL ends, and the live waiter behind it gets the lock
// as soon as the holder releases.
func TestHungUpWaiterWithStrayBytesLeavesTheQueue(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	holder := h.Client()
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "ghosted", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	for _, stray := range []string{"x", "*1\r\n$4\r\nPI"} {
		ghost := fmt.Sprintf("ghost%d", len(stray))
		nc, err := net.Dial("tcp", h.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(nc, "LOCK.ACQUIRE ghosted %s 60000 WAIT 60000\r\n", ghost); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, ghost+" queued", func() bool { return queuedOn(t, h, "ghosted", ghost) >= 2 })
		if _, err := nc.Write([]byte(stray)); err != nil {
			t.Fatal(err)
		}
		_ = nc.Close()
		// The default health interval is 1 s: gone well within a few.
		harness.Eventually(t, ghost+", hung up after a stray byte, to leave every backend's queue", func() bool {
			return queuedOn(t, h, "ghosted", ghost) == 0
		})
	}
	got := make(chan error, 1)
	go func() {
		got <- h.Client().Do(ctx, "LOCK.ACQUIRE", "ghosted", "next", 60000, "WAIT", 60000).Err()
	}()
	harness.Eventually(t, "the live waiter queued", func() bool { return queuedOn(t, h, "ghosted", "next") >= 2 })
	if err := holder.Do(ctx, "LOCK.RELEASE", "ghosted", "holder").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the live waiter after the release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the live waiter was not granted within 10s of the release: a ghost kept its place")
	}
}
