package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// Six waiters queued through two engines are granted in the order they
// were queued, whatever their names, each as the lock frees; a newcomer
// does not jump the queue.
func TestFairQueueGrantsInArrivalOrder(t *testing.T) {
	fs, nodes := fakes(3)
	a, b := newEngine(t, nodes), newEngine(t, nodes) // two replicas
	ctx := context.Background()
	if _, err := a.AcquireFenced(ctx, "k", "holder", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	engines := map[string]*Engine{}
	var order []string
	for i := range 6 {
		w, e := fmt.Sprint("w", 5-i), a // names sort against arrival: tickets decide
		if i%2 == 1 {
			e = b
		}
		if err := e.Enqueue(ctx, "k", w, time.Minute); err != nil {
			t.Fatal(err)
		}
		engines[w], order = e, append(order, w)
	}
	if _, err := b.AcquireFenced(ctx, "k", "newcomer", time.Second); !errors.Is(err, ErrTaken) {
		t.Fatalf("a newcomer while the lock is held and waiters queue = %v; want taken", err)
	}
	var rerr *RoundError
	if _, err := a.AcquireWaiting(ctx, "k", order[0], time.Second); !errors.As(err, &rerr) || rerr.RetryIn < 9*time.Second {
		t.Fatalf("the first waiter while the lock is held = %v; want taken, retry in about the holder's 10s", err)
	}
	if err := a.Release(ctx, "k", "holder"); err != nil {
		t.Fatal(err)
	}
	var granted []string
	for range order {
		// Everyone tries; only the head may get it.
		var winner string
		for _, w := range order {
			if slices.Contains(granted, w) {
				continue
			}
			if _, err := engines[w].AcquireWaiting(ctx, "k", w, 5*time.Second); err == nil {
				if winner != "" {
					t.Fatalf("%s and %s both granted", winner, w)
				}
				winner = w
			} else if !errors.Is(err, ErrTaken) {
				t.Fatal(err)
			}
		}
		if winner == "" {
			t.Fatalf("nobody granted after %v", granted)
		}
		granted = append(granted, winner)
		if _, err := engines[winner].ReleaseFair(ctx, "k", winner); err != nil { // leaves the queue too
			t.Fatal(err)
		}
	}
	if !slices.Equal(granted, order) {
		t.Fatalf("granted %v; want arrival order %v", granted, order)
	}
	// Each release took its holder out of the queue where it deleted the
	// lock: a quorum at least (a node that missed the release keeps a
	// waiter until its lease ends).
	empty := 0
	for _, f := range fs {
		f.mu.Lock()
		if len(f.queueLocked("k")) == 0 {
			empty++
		}
		f.mu.Unlock()
	}
	if empty < 2 {
		t.Fatalf("the queue is empty on %d nodes after every waiter released; want a quorum", empty)
	}
}

// Waiters queued at once, through two engines and with a node down, are in
// the same order on every node: ticket ties are broken by name.
func TestFairQueueSameOrderEverywhere(t *testing.T) {
	fs, nodes := fakes(5)
	a, b := newEngine(t, nodes), newEngine(t, nodes)
	fs[4].setFault(errRefused, 0, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Go(func() {
			if err := e.Enqueue(context.Background(), "k", fmt.Sprint("w", i), time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var first []string
	for _, f := range fs[:4] {
		f.mu.Lock()
		q := f.queueLocked("k")
		var order []string
		for len(q) > 0 {
			h, _ := head(q)
			order = append(order, h)
			delete(q, h)
		}
		f.mu.Unlock()
		// Compare the waiters this node and the first both have.
		if first == nil {
			first = order
			continue
		}
		var a, b []string
		for _, w := range order {
			if slices.Contains(first, w) {
				a = append(a, w)
			}
		}
		for _, w := range first {
			if slices.Contains(order, w) {
				b = append(b, w)
			}
		}
		if !slices.Equal(a, b) {
			t.Fatalf("%s orders the waiters %v, node0 %v", f.name, a, b)
		}
	}
}

// A waiter whose lease ran out (its replica died) no longer blocks the
// queue; one whose lease is renewed keeps its place; a waiter that was
// purged learns it from QueueBeat.
func TestFairQueueLeases(t *testing.T) {
	_, nodes := fakes(3)
	e := newEngine(t, nodes)
	ctx := context.Background()
	// The dead waiter's lease is short; the live one's is long enough that
	// no stall of a busy machine between its renewals loses it.
	const deadLease, liveLease = 200 * time.Millisecond, 5 * time.Second
	if err := e.Enqueue(ctx, "k", "dead", deadLease); err != nil {
		t.Fatal(err)
	}
	if err := e.Enqueue(ctx, "k", "live", liveLease); err != nil {
		t.Fatal(err)
	}
	var rerr *RoundError
	if _, err := e.AcquireWaiting(ctx, "k", "live", time.Second); !errors.As(err, &rerr) || rerr.RetryIn <= 0 || rerr.RetryIn > deadLease {
		t.Fatalf("behind a waiter = %v; want taken, retry when its lease ends", err)
	}
	for range 3 { // past the dead waiter's lease
		time.Sleep(deadLease / 2)
		if ok, err := e.QueueBeat(ctx, "k", "live", liveLease); err != nil || !ok {
			t.Fatalf("QueueBeat = %v, %v", ok, err)
		}
	}
	if _, err := e.AcquireWaiting(ctx, "k", "live", time.Second); err != nil {
		t.Fatalf("after the dead waiter's lease ended: %v", err)
	}
	if ok, err := e.QueueBeat(ctx, "k", "dead", time.Second); err != nil || ok {
		t.Fatalf("QueueBeat of a purged waiter = %v, %v; want false", ok, err)
	}
}
