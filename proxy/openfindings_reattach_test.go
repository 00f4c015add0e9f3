//go:build openfindings

package proxy

// Open findings of helper-72 on dc41eb9 (go test -tags openfindings -run
// TestClockSkewed ./proxy; each failed 3 of 3): re-attach rounds are
// stamped with the arrival time on their replica's wall clock, so across
// replicas whose clocks are offset (200 ms; 2 s) an earlier request can
// outrank a later, answered one, or a holder's only live re-attach is
// refused as superseded until the clocks pass its earlier stamp. The
// README states the assumption (replica clocks agree); a fix needs an
// order that does not come from the replicas' clocks.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func TestClockSkewedReplicaEarlierReattachOvertakesTheAnsweredOne(t *testing.T) {
	a, b := h72Engines(t)
	const skew = 200 * time.Millisecond // B's clock ahead of A's
	const runs = 3
	failed, why := 0, ""
	for i := range runs {
		now := time.Now()
		yReal := now.Add(-100 * time.Millisecond) // Y arrived 100 ms before X2
		if msg := h72Overtake(t, a, b, fmt.Sprintf("skew%d", i), now, yReal.Add(skew)); msg != "" {
			failed++
			why = msg
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed (B's clock %v ahead of A's): %s", failed, runs, skew, why)
	}
}

func TestClockSkewedReplicaBlocksTheHoldersReattach(t *testing.T) {
	a, b := h72Engines(t)
	const skew = 2 * time.Second // B's clock ahead of A's
	const ttl = 2700 * time.Millisecond
	ctx := t.Context()
	const runs = 3
	failed, why := 0, ""
	for i := range runs {
		key := fmt.Sprintf("block%d", i)
		h72Session(t, a, key, ttl)
		// The holder re-attached through B (B's clock), then B shut down
		// gracefully: the holder re-attaches through A, as the client package
		// does, every 50 ms until its give-up (2/3 TTL).
		if _, err := b.Reattach(quorum.WithArrival(ctx, time.Now().Add(skew)), key, "o", ttl, nil); err != nil {
			t.Fatalf("setup: re-attach through B: %v", err)
		}
		giveUp := time.Now().Add(ttl * 2 / 3)
		var last error
		ok := false
		for time.Now().Before(giveUp) {
			_, err := a.Reattach(quorum.WithArrival(ctx, time.Now()), key, "o", ttl, nil)
			if err == nil {
				ok = true
				break
			}
			last = err
			time.Sleep(50 * time.Millisecond)
		}
		if !ok {
			failed++
			why = fmt.Sprintf("the holder's only live re-attach (through A) was refused for 2/3 of the TTL (%v), last: %v (superseded: %v)",
				ttl*2/3, last, errors.Is(last, quorum.ErrSuperseded))
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed (B's clock %v ahead of A's): %s", failed, runs, skew, why)
	}
}
