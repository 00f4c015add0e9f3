package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The waiters' beats: every session_tick one engine.QueueBeats renews the
// places of all the server's parked waiters, one script per 128 waiters
// per backend, instead of one quorum round per waiter (issue 25: 2750 idle
// waiters drove the backends to 99k calls a second).

// beatEntry is one parked waiter; gone is signalled when a beat found its
// place gone from the queue (its lease ran out: a pause, a partition).
type beatEntry struct {
	key, owner string
	gone       chan struct{}
}

// beater renews the places of the parked waiters while there are any.
type beater struct {
	s       *lockService
	mu      sync.Mutex
	waiters map[*beatEntry]struct{}
	running bool
}

// join registers a waiter and starts the beats if they are not running.
func (b *beater) join(key, owner string) *beatEntry {
	e := &beatEntry{key: key, owner: owner, gone: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiters == nil {
		b.waiters = map[*beatEntry]struct{}{}
	}
	b.waiters[e] = struct{}{}
	if !b.running {
		b.running = true
		go b.run()
	}
	return e
}

// leave unregisters a waiter.
func (b *beater) leave(e *beatEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.waiters, e)
}

// run beats every tick until no waiter is left.
func (b *beater) run() {
	t := time.NewTicker(b.s.opts.SessionTick)
	defer t.Stop()
	for range t.C {
		b.mu.Lock()
		entries := make([]*beatEntry, 0, len(b.waiters))
		for e := range b.waiters {
			entries = append(entries, e)
		}
		if len(entries) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		beats := make([]quorum.Lease, len(entries))
		for i, e := range entries {
			beats[i] = quorum.Lease{Key: e.key, Value: e.owner, TTL: b.s.waitLease()}
		}
		for i, v := range b.s.engine.QueueBeats(context.Background(), beats) {
			if v == quorum.BeatGone {
				select {
				case entries[i].gone <- struct{}{}:
				default:
				}
			}
		}
	}
}
