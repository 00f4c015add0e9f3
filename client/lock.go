package client

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lock is a lock this process holds. Its fields do not change after
// Obtain, so its methods may be called from several goroutines (a
// refresher beside the holder's deferred Release).
type Lock struct {
	c       *Client
	key     string
	owner   string
	token   int64
	session bool
	wait    time.Duration
	sess    *session // a session lock's connection; nil otherwise
}

// Key is the lock's key.
func (l *Lock) Key() string { return l.key }

// Owner is the value that identifies this holder.
func (l *Lock) Owner() string { return l.owner }

// Token is the lock's fencing token: send it with every write the lock
// protects, and have the resource refuse tokens older than the last it saw.
func (l *Lock) Token() int64 { return l.token }

// Done is closed when a session lock's session ends: Release, its
// connection broke and the lock could not be re-attached on a new one (the
// proxy released it, or it expires with its TTL), or the proxy answered
// that the lock is no longer held. Stop the
// work the lock protects then. Nil (never closed) for a lock without
// WithSession, which learns it from Refresh.
func (l *Lock) Done() <-chan struct{} {
	if l.sess == nil {
		return nil
	}
	return l.sess.done
}

// TTL is the time the lock has left; ErrLockNotHeld when it was lost.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	ms, err := l.do(ctx, "PTTL", l.key).Int64()
	if err != nil {
		return 0, typed(err)
	}
	// The owner, read after the TTL: a lock taken over since would show
	// another owner (each holder's owner is its own).
	owner, err := l.do(ctx, "GET", l.key).Text()
	switch {
	case errors.Is(err, redis.Nil) || err == nil && owner != l.owner || err == nil && ms < 0:
		return 0, l.lost()
	case err != nil:
		return 0, typed(err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Refresh sets the lock's TTL to ttl from now; ErrLockNotHeld when it was
// lost (expired, or taken over). The token stays the same.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	// A session lock whose connection is gone is being released by the
	// proxy: extending it through another connection would only race that.
	if l.sess != nil && l.sess.ended() {
		return ErrLockNotHeld
	}
	n, err := l.do(ctx, "LOCK.EXTEND", l.key, l.owner, ttl.Milliseconds()).Int64()
	if err != nil && l.sess != nil && l.sess.ended() && errors.Is(err, net.ErrClosed) {
		return ErrLockNotHeld // its connection closed under it (a Release beside it)
	}
	if err == nil && n == 1 && l.sess != nil {
		l.sess.ttl.Store(int64(ttl)) // a re-attach keeps it
	}
	return l.held(n, err)
}

// Release gives the lock up; ErrLockNotHeld when it was already lost. A
// session lock's connection is closed too, which releases it on the proxy
// even if the release command failed.
func (l *Lock) Release(ctx context.Context) error {
	err := l.held(l.do(ctx, "LOCK.RELEASE", l.key, l.owner).Int64())
	if l.sess != nil {
		l.sess.end()
	}
	return err
}

// do sends a command on the lock's session connection while the session
// lasts (re-attaching the lock first when that connection broke), else
// through the client's pool (where a released session lock is found gone).
func (l *Lock) do(ctx context.Context, args ...any) *redis.Cmd {
	if s := l.sess; s != nil && !s.ended() {
		conn := s.conn.Load()
		cmd := conn.Do(ctx, args...)
		if !broken(cmd.Err()) {
			return cmd
		}
		if s.reattach(conn) {
			return s.conn.Load().Do(ctx, args...)
		}
	}
	return l.c.rdb.Do(ctx, args...)
}

func (l *Lock) held(n int64, err error) error {
	switch {
	case err != nil:
		return typed(err)
	case n != 1:
		return l.lost()
	}
	return nil
}

// lost: the proxy says the lock is not held; a session lock's session ends.
func (l *Lock) lost() error {
	if l.sess != nil {
		l.sess.end()
	}
	return ErrLockNotHeld
}
