package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors a lock operation returns beside the proxy's own (NOQUORUM and
// the like arrive as go-redis errors with their text).
var (
	// ErrNotObtained: another owner holds the lock.
	ErrNotObtained = errors.New("redlock-proxy: lock not obtained")
	// ErrLockNotHeld: the lock is not (any more) held by this owner.
	ErrLockNotHeld = errors.New("redlock-proxy: lock not held")
)

// RedisClient is what the package needs of a go-redis client; *redis.Client
// and redis.UniversalClient have it.
type RedisClient interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// Client takes locks through one connection pool to the proxy.
type Client struct {
	rdb RedisClient
}

// New returns a Client over rdb, a go-redis client connected to the proxy.
func New(rdb RedisClient) *Client { return &Client{rdb: rdb} }

// Lock is a lock this process holds.
type Lock struct {
	c     *Client
	key   string
	owner string
	token int64
}

// Option changes how Obtain asks for a lock.
type Option func(*Lock)

// WithOwner names the lock's owner; by default a random 128-bit value, which
// no other process can release by mistake.
func WithOwner(owner string) Option { return func(l *Lock) { l.owner = owner } }

// Obtain takes key for ttl (whole milliseconds) and returns the lock with its
// fencing token; ErrNotObtained when another owner holds it.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opts ...Option) (*Lock, error) {
	l := &Lock{c: c, key: key}
	for _, o := range opts {
		o(l)
	}
	if l.owner == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		l.owner = hex.EncodeToString(b[:])
	}
	token, err := c.rdb.Do(ctx, "LOCK.ACQUIRE", key, l.owner, ttl.Milliseconds()).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrNotObtained
	case err != nil:
		return nil, err
	}
	l.token = token
	return l, nil
}

// Token reads the fencing token of key's current holder; ErrLockNotHeld
// when nobody holds it with a token.
func (c *Client) Token(ctx context.Context, key string) (int64, error) {
	token, err := c.rdb.Do(ctx, "LOCK.TOKEN", key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, ErrLockNotHeld
	}
	return token, err
}

// Key is the lock's key.
func (l *Lock) Key() string { return l.key }

// Owner is the value that identifies this holder.
func (l *Lock) Owner() string { return l.owner }

// Token is the lock's fencing token: send it with every write the lock
// protects, and have the resource refuse tokens older than the last it saw.
func (l *Lock) Token() int64 { return l.token }

// Refresh sets the lock's TTL to ttl from now; ErrLockNotHeld when it was
// lost (expired, or taken over). The token stays the same.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	return l.held(l.c.rdb.Do(ctx, "LOCK.EXTEND", l.key, l.owner, ttl.Milliseconds()).Int64())
}

// Release gives the lock up; ErrLockNotHeld when it was already lost.
func (l *Lock) Release(ctx context.Context) error {
	return l.held(l.c.rdb.Do(ctx, "LOCK.RELEASE", l.key, l.owner).Int64())
}

func (l *Lock) held(n int64, err error) error {
	switch {
	case err != nil:
		return err
	case n != 1:
		return ErrLockNotHeld
	}
	return nil
}
