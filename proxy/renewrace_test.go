package proxy

import (
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/backend"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A session lock released while a renewal round is being prepared (its
// locks taken from the book, the round not yet out): the release must wait
// for that round, or the round, landing after the release deleted the lock
// everywhere, restores it on every backend (the key and note both absent):
// a released lock taken again for a whole TTL.
func TestSessionReleaseWaitsForARenewalBeingPrepared(t *testing.T) {
	snap, renewed, released := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, onceDone sync.Once
	hook := func(stage string) {
		switch stage {
		case "snapshot":
			once.Do(func() {
				close(snap)
				// Let the release run first if it can; with the fix it
				// waits for this round, so give up after a while.
				select {
				case <-released:
				case <-time.After(2 * time.Second):
				}
			})
		case "renewed":
			onceDone.Do(func() { close(renewed) })
		}
	}
	renewHook.Store(&hook)
	t.Cleanup(func() { renewHook.Store(nil) })
	var nodes []quorum.Node
	for _, a := range redistest.Addrs(redistest.Start(t, 3)) {
		nodes = append(nodes, backend.NewNode(&redis.Options{Addr: a}))
	}
	e, err := quorum.New(nodes, quorum.WithQuarantine(false), quorum.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(e, WithLogger(slog.New(slog.DiscardHandler)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close(); _ = e.Close() })
	addr := ln.Addr().String()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, ReadTimeout: 20 * time.Second})
	defer c.Close()
	ctx := t.Context()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := c.Do(ctx, "LOCK.ACQUIRE", "k", "s", 1500, "SESSION").Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LOCK.ACQUIRE for 30s: %v", err) // the backends vote once their identity is read
		}
	}
	select {
	case <-snap:
	case <-time.After(30 * time.Second):
		t.Fatal("no renewal round in 30s")
	}
	var relErr error
	go func() {
		relErr = c.Do(ctx, "LOCK.RELEASE", "k", "s").Err()
		close(released)
	}()
	for _, ch := range []chan struct{}{renewed, released} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("the renewal round or the release did not end in 30s")
		}
	}
	if relErr != nil {
		t.Fatalf("LOCK.RELEASE: %v", relErr)
	}
	c2 := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 20 * time.Second})
	defer c2.Close()
	if v, err := c2.Get(ctx, "k").Result(); err != redis.Nil {
		t.Fatalf("GET k after its release = %q, %v; want nil: a renewal restored the released lock", v, err)
	}
}
