package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var errDown = errors.New("connection refused")

// fakeNode is an in-memory node with injectable faults: an error for every
// call, a delay, or a gate that holds calls until the test opens it.
type fakeNode struct {
	name string

	mu       sync.Mutex
	data     map[string]fakeEntry
	err      error
	delay    time.Duration
	gate     chan struct{}
	setTTLs  []time.Duration
	inflight map[string]int
	maxIn    int
	calls    map[string]int
}

type fakeEntry struct {
	value  string
	expiry time.Time
}

func newFake(name string) *fakeNode {
	return &fakeNode{name: name, data: map[string]fakeEntry{}, inflight: map[string]int{}, calls: map[string]int{}}
}

func fakes(n int) ([]*fakeNode, []Node) {
	fs := make([]*fakeNode, n)
	ns := make([]Node, n)
	for i := range fs {
		fs[i] = newFake(fmt.Sprintf("node%d", i))
		ns[i] = fs[i]
	}
	return fs, ns
}

func (f *fakeNode) Addr() string { return f.name }
func (f *fakeNode) Close() error { return nil }

func (f *fakeNode) put(key, value string, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[key] = fakeEntry{value, time.Now().Add(ttl)}
}

func (f *fakeNode) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) {
		return "", false
	}
	return e.value, true
}

func (f *fakeNode) setFault(err error, delay time.Duration, gate chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err, f.delay, f.gate = err, delay, gate
}

func (f *fakeNode) callCount(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// enter applies the faults; it returns the error the call must fail with.
func (f *fakeNode) enter(ctx context.Context, op, key string) error {
	f.mu.Lock()
	err, delay, gate := f.err, f.delay, f.gate
	f.calls[op]++
	f.inflight[key]++
	f.maxIn = max(f.maxIn, f.inflight[key])
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeNode) leave(key string) {
	f.mu.Lock()
	f.inflight[key]--
	f.mu.Unlock()
}

func (f *fakeNode) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	defer f.leave(key)
	if err := f.enter(ctx, "setnx", key); err != nil {
		return false, err
	}
	if _, ok := f.get(key); ok {
		return false, nil
	}
	f.mu.Lock()
	f.setTTLs = append(f.setTTLs, ttl)
	f.mu.Unlock()
	f.put(key, value, ttl)
	return true, nil
}

func (f *fakeNode) DelIfEq(ctx context.Context, key, value string) (bool, error) {
	defer f.leave(key)
	if err := f.enter(ctx, "delifeq", key); err != nil {
		return false, err
	}
	if v, ok := f.get(key); !ok || v != value {
		return false, nil
	}
	f.mu.Lock()
	delete(f.data, key)
	f.mu.Unlock()
	return true, nil
}

func (f *fakeNode) PExpireIfEq(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	defer f.leave(key)
	if err := f.enter(ctx, "pexpireifeq", key); err != nil {
		return false, err
	}
	if v, ok := f.get(key); !ok || v != value {
		return false, nil
	}
	f.mu.Lock()
	f.setTTLs = append(f.setTTLs, ttl)
	f.mu.Unlock()
	f.put(key, value, ttl)
	return true, nil
}

func (f *fakeNode) Read(ctx context.Context, key string) (Entry, error) {
	defer f.leave(key)
	if err := f.enter(ctx, "read", key); err != nil {
		return Entry{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) {
		return Entry{}, nil
	}
	return Entry{Found: true, Value: e.value, TTL: time.Until(e.expiry).Truncate(time.Millisecond)}, nil
}

func (f *fakeNode) Del(ctx context.Context, key string) (bool, error) {
	defer f.leave(key)
	if err := f.enter(ctx, "del", key); err != nil {
		return false, err
	}
	_, ok := f.get(key)
	f.mu.Lock()
	delete(f.data, key)
	f.mu.Unlock()
	return ok, nil
}

func (f *fakeNode) Ping(ctx context.Context) error {
	defer f.leave("")
	return f.enter(ctx, "ping", "")
}
