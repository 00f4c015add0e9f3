package proxy

// helper-72: re-attach rounds are ordered by the wall-clock millisecond the
// request arrived at on ITS replica (438f58d), then by generation (one past
// the round the re-attach read). Two replicas A and B over the same
// backends (two quorum.Engines, each request stamped by its replica's clock
// with quorum.WithArrival, as the proxy does with c.arrived):
//
//  1. same millisecond, no skew: the client's re-attach Y (through B)
//     arrived first, X2 (through A) after it, in the same ms. X2 is answered;
//     Y's read runs late (slow read, paused replica: helper-71's case), finds
//     X2's round stamped the same ms, is not superseded (strict >), and its
//     round is a generation past X2's: it moves the lock off X2.
//     Fixed: arrivals are stamped in µs.
//  2. B's clock 200 ms ahead of A's (NTP-level offsets are not in the
//     model: README bounds clock RATES only): Y arrived 100 ms before X2,
//     stamped 100 ms after it: the same overtake, helper-71's finding back.
//  3. B's clock 2 s ahead: the holder re-attached through B, B shuts down
//     gracefully, the holder re-attaches through A: answered ErrSuperseded
//     ("a request of its owner that arrived after this one") for 2 s though
//     no such request exists; with a session TTL under 3 s the client
//     package's give-up (2/3 TTL) passes and the session ends.
//  2 and 3 are open (proxy/openfindings_reattach_test.go): the order
//  across replicas assumes their clocks agree (README).

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

func h72Engines(t *testing.T) (*quorum.Engine, *quorum.Engine) {
	addrs := redistest.Addrs(redistest.Start(t, 3))
	mk := func() *quorum.Engine {
		var nodes []quorum.Node
		for _, a := range addrs {
			nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
		}
		e, err := quorum.New(nodes, quorum.WithQuarantine(false), quorum.WithLockDelay(0, 0),
			quorum.WithLogger(slog.New(slog.DiscardHandler)), quorum.WithNodeTimeout(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	return mk(), mk()
}

func h72Session(t *testing.T, e *quorum.Engine, key string, ttl time.Duration) quorum.Grant {
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		g, err := e.AcquireSession(quorum.WithArrival(t.Context(), time.Now()), key, "o", ttl)
		if err == nil {
			return g
		}
		if time.Now().After(end) {
			t.Fatalf("setup: AcquireSession: %v", err)
		}
	}
}

// overtake: X2 via A stamped x2At is answered; then Y via B stamped yAt
// (Y arrived before X2 in real time) reads late. Returns "" when X2 keeps
// the lock.
func h72Overtake(t *testing.T, a, b *quorum.Engine, key string, x2At, yAt time.Time) string {
	const ttl = 3 * time.Second
	ctx := t.Context()
	h72Session(t, a, key, ttl)
	x2, err := a.Reattach(quorum.WithArrival(ctx, x2At), key, "o", ttl, nil)
	if err != nil {
		t.Fatalf("setup: X2's re-attach: %v", err)
	}
	_, yerr := b.Reattach(quorum.WithArrival(ctx, yAt), key, "o", ttl, nil)
	// X2's connection renews with its round (ExtendRound): does it still hold it?
	if _, err := a.ExtendRound(quorum.WithArrival(ctx, time.Now()), key, "o", ttl, x2.Round); err != nil {
		return fmt.Sprintf("Y (arrived before X2 in real time; stamps Y %s, X2 %s) answered %v, and X2's renewal with its answered round now fails: %v",
			yAt.Format("15:04:05.000000"), x2At.Format("15:04:05.000000"), yerrOr(yerr), err)
	}
	return ""
}

func yerrOr(err error) string {
	if err == nil {
		return "a token (moved the lock)"
	}
	return err.Error()
}

func TestSameMillisecondEarlierReattachDoesNotOvertakeTheAnsweredOne(t *testing.T) {
	a, b := h72Engines(t)
	const runs = 3
	failed, why := 0, ""
	for i := range runs {
		ms := time.Now().Truncate(time.Millisecond)
		// Y arrived at .1 ms, X2 at .9 ms of the same millisecond; no clock skew.
		if msg := h72Overtake(t, a, b, fmt.Sprintf("same%d", i), ms.Add(900*time.Microsecond), ms.Add(100*time.Microsecond)); msg != "" {
			failed++
			why = msg
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed: %s", failed, runs, why)
	}
}
