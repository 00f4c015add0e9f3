package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
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

// Option changes how Obtain asks for a lock.
type Option func(*Lock)

// WithOwner names the lock's owner; by default a random 128-bit value, which
// no other process can release by mistake.
func WithOwner(owner string) Option { return func(l *Lock) { l.owner = owner } }

// WithSession binds the lock to a connection of its own, as a ZooKeeper
// ephemeral node is bound to its session: the proxy renews it while that
// connection is open, so no Refresh is needed, and releases it when the
// connection closes (Release, this process exiting). If the proxy replica
// dies the lock expires with its TTL. When the connection breaks (a
// replica's graceful shutdown in a rolling upgrade leaves its session locks
// to their TTL), the lock is re-attached on a new connection, to whichever
// replica the client's address reaches, with the same token; Done fires
// only when that fails (the lock was lost, or no replica answered within
// two thirds of its TTL). The Client must be a *redis.Client (its options are copied
// for the lock's connection), and ttl at least three of the proxy's
// session_tick.
func WithSession() Option { return func(l *Lock) { l.session = true } }

// WithWait waits up to d for the lock in its fair queue (LOCK.ACQUIRE ...
// WAIT): waiters on every proxy replica are granted in arrival order, woken
// by the release before them. ErrNotObtained when d passed first. A wait
// longer than the client's read timeout goes through a connection of its
// own with a timeout that covers it (a *redis.Client's options are copied).
func WithWait(d time.Duration) Option { return func(l *Lock) { l.wait = d } }

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
	args := []any{"LOCK.ACQUIRE", key, l.owner, ttl.Milliseconds()}
	if l.wait > 0 {
		args = append(args, "WAIT", l.wait.Milliseconds())
	}
	var cmd *redis.Cmd
	switch {
	case l.session:
		conn, err := c.sessionConn(l.wait)
		if err != nil {
			return nil, err
		}
		l.sess = newSession(l, ttl, conn)
		cmd = conn.Do(ctx, append(args, "SESSION")...)
	case l.wait > 0 && c.waitOutlasts(l.wait):
		conn, _ := c.ownConn(l.wait)
		cmd = conn.Do(ctx, args...)
		_ = conn.Close()
	default:
		cmd = l.do(ctx, args...)
	}
	token, err := cmd.Int64()
	switch {
	case errors.Is(err, redis.Nil):
		err = ErrNotObtained
	case err == nil:
		l.token = token
		if l.sess != nil {
			l.sess.seen()
			go l.sess.watch(ttl / 3)
		}
		return l, nil
	}
	if l.sess != nil {
		l.sess.end()
	}
	return nil, typed(err)
}

// ownConn opens a connection of its own (a session lock's, or a long
// wait's): a pool of one that never closes it for idleness or age (that
// would release a session lock), never retries a command on another
// connection, and reads long enough for a wait.
func (c *Client) ownConn(wait time.Duration) (*redis.Client, error) {
	rc, ok := c.rdb.(*redis.Client)
	if !ok {
		return nil, ErrNoSession
	}
	o := *rc.Options()
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns = 1, 0, 1
	o.ConnMaxIdleTime, o.ConnMaxLifetime = -1, 0
	o.MaxRetries = -1
	o.DialerRetries = 1 // its one connection: a session re-attaches on a new one itself
	if c.waitOutlasts(wait) {
		o.ReadTimeout = wait + waitMargin
	}
	return redis.NewClient(&o), nil
}

// waitMargin is what a wait's reply may take beyond the wait: the round
// that grants the lock, on a busy proxy.
const waitMargin = 5 * time.Second

// waitOutlasts reports whether a wait would outlast the client's read
// timeout (go-redis: 0 is 3s, negative none), so that its reply would be
// cut off.
func (c *Client) waitOutlasts(wait time.Duration) bool {
	rc, ok := c.rdb.(*redis.Client)
	if !ok || wait <= 0 {
		return false
	}
	rt := rc.Options().ReadTimeout
	if rt == 0 {
		rt = 3 * time.Second
	}
	return rt > 0 && rt < wait+waitMargin
}

// Token reads the fencing token of key's current holder; ErrLockNotHeld
// when nobody holds it with a token.
func (c *Client) Token(ctx context.Context, key string) (int64, error) {
	token, err := c.rdb.Do(ctx, "LOCK.TOKEN", key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, ErrLockNotHeld
	}
	return token, typed(err)
}
