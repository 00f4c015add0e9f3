package quorum

import (
	"context"
	"sync"
)

// keyLocks serialises rounds for the same (key, value) inside one engine, so
// that a rollback of one round can never delete what a later round of the
// same owner wrote. Entries exist only while in use.
type keyLocks struct {
	mu sync.Mutex
	m  map[lockID]*keyLock
}

type lockID struct{ key, value string }

type keyLock struct {
	sem  chan struct{} // holds one token while a round runs
	refs int
}

// lock waits for the (key, value) slot or for ctx; it returns the unlock func.
func (k *keyLocks) lock(ctx context.Context, key, value string) (func(), error) {
	id := lockID{key, value}
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[lockID]*keyLock)
	}
	l := k.m[id]
	if l == nil {
		l = &keyLock{sem: make(chan struct{}, 1)}
		k.m[id] = l
	}
	l.refs++
	k.mu.Unlock()

	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem; k.release(id, l) }, nil
	case <-ctx.Done():
		k.release(id, l)
		return nil, ctx.Err()
	}
}

func (k *keyLocks) release(id lockID, l *keyLock) {
	k.mu.Lock()
	l.refs--
	if l.refs == 0 {
		delete(k.m, id)
	}
	k.mu.Unlock()
}
