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
	sem    chan struct{} // holds one token while a round runs
	refs   int           // waiters and the holder; guarded by keyLocks.mu
	id     lockID
	of     *keyLocks // while in a keyLocks' map
	unlock func()    // made once per keyLock: a slot costs no allocation once the pool is warm
}

// free keeps keyLocks out of use, with their channel and unlock func, for
// the next slot (every round takes one).
var free sync.Pool

func init() {
	free.New = func() any {
		l := &keyLock{sem: make(chan struct{}, 1)}
		l.unlock = func() { <-l.sem; l.of.release(l) }
		return l
	}
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
		l = free.Get().(*keyLock)
		l.id, l.of = id, k
		k.m[id] = l
	}
	l.refs++
	k.mu.Unlock()

	select {
	case l.sem <- struct{}{}:
		return l.unlock, nil
	case <-ctx.Done():
		k.release(l)
		return nil, ctx.Err()
	}
}

// release drops one reference to l; the last one takes it out of the map
// and back to the pool (nothing else can reach it then: a new round for the
// same slot finds no entry and takes another).
func (k *keyLocks) release(l *keyLock) {
	k.mu.Lock()
	l.refs--
	last := l.refs == 0
	if last {
		delete(k.m, l.id)
		l.id, l.of = lockID{}, nil
	}
	k.mu.Unlock()
	if last {
		free.Put(l)
	}
}
