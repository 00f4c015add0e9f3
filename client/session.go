package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// session is a session lock's own connection and whether it still holds:
// the proxy renews the lock while that one connection is open. When the
// connection breaks (its proxy replica shut down for an upgrade, or the
// link failed), the session re-attaches the lock on a new connection: it
// sends the lock's LOCK.ACQUIRE ... SESSION again, which the proxy answers,
// for the lock's holder, with the same token (a replica that shuts down
// gracefully leaves its session locks to their TTL for this). Anything else
// ends the session: nil or another token (the lock was lost meanwhile: a
// new grant is released at once), or no replica answering before half the
// TTL has passed since the connection was last seen alive.
type session struct {
	l    *Lock
	ttl  atomic.Int64 // the TTL a re-attach asks for: Obtain's, or the last Refresh's
	conn atomic.Pointer[redis.Client]
	done chan struct{}
	once sync.Once

	mu       sync.Mutex // one re-attach at a time
	lastSeen atomic.Int64
}

func newSession(l *Lock, ttl time.Duration, conn *redis.Client) *session {
	s := &session{l: l, done: make(chan struct{})}
	s.ttl.Store(int64(ttl))
	s.use(conn)
	return s
}

// use makes conn, a sessionConn, the session's connection.
func (s *session) use(conn *redis.Client) {
	s.conn.Store(conn)
	s.seen()
}

// sessionConn is a connection of the session's own whose pool dials once,
// before its first command: go-redis redials a broken connection quietly,
// and a second connection would not hold the lock; the session re-attaches
// on a new sessionConn instead. The hook is added before that dial
// (helper-73: added after the re-attach's command had dialed, it let a
// ping redial to the next replica after a second graceful shutdown, and
// the session went on holding nothing).
func (c *Client) sessionConn(wait time.Duration) (*redis.Client, error) {
	conn, err := c.ownConn(wait)
	if err == nil {
		conn.AddHook(&oneDial{})
	}
	return conn, err
}

func (s *session) seen() { s.lastSeen.Store(time.Now().UnixNano()) }

// end closes the session: Done fires and the connection closes, which
// releases the lock on the proxy if it still held it.
func (s *session) end() {
	s.once.Do(func() { close(s.done) })
	_ = s.conn.Load().Close()
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// watch pings the connection every interval until the session ends, so a
// broken link is noticed, and the lock re-attached, without a command of
// the holder's.
func (s *session) watch(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		// No ctx deadline: a ping waiting for the holder's own command is
		// not a broken link; a read timeout is, and go-redis closes the
		// connection then.
		conn := s.conn.Load()
		switch err := conn.Ping(context.Background()).Err(); {
		case err == nil:
			s.seen()
		case errors.Is(err, redis.ErrPoolTimeout):
		case !s.reattach(conn):
			return
		}
	}
}

// broken reports whether a command's error means the session's connection
// is gone (not a reply of the proxy, nor the caller's context).
func broken(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var reply redis.Error
	return !errors.As(err, &reply) && !errors.Is(err, redis.ErrPoolTimeout)
}

// reattach replaces the broken connection was with a new one that holds the
// lock again, and reports whether the session goes on; if not, it ended.
func (s *session) reattach(was *redis.Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended() {
		return false
	}
	if s.conn.Load() != was {
		return true // another caller re-attached it already
	}
	_ = was.Close()
	// The lock outlives the connection by at least two thirds of its TTL
	// (renewed a third in, less the replica's tick), and the connection
	// was alive when last seen: stop there. Until then the holder goes on
	// without proof, as between two pings; a lock lost meanwhile answers
	// nil (or a new token) here, and the session ends.
	ttl := time.Duration(s.ttl.Load())
	giveUp := time.Unix(0, s.lastSeen.Load()).Add(ttl * 2 / 3)
	ctx, cancel := context.WithDeadline(context.Background(), giveUp)
	defer cancel()
	l := s.l
	var conn *redis.Client
	for ctx.Err() == nil {
		if conn == nil {
			var err error
			if conn, err = l.c.sessionConn(0); err != nil {
				break
			}
		}
		token, err := conn.Do(ctx, "LOCK.ACQUIRE", l.key, l.owner, ttl.Milliseconds(), "SESSION").Int64()
		if err == nil && token == l.token {
			s.use(conn)
			return true
		}
		if err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
			// No replica answered yet (a new connection next), or the
			// re-attach answered an error (NOQUORUM): it may have moved
			// the lock to this connection all the same, whose close would
			// release it, so it is asked again on the same one.
			var reply redis.Error
			if !errors.As(err, &reply) {
				_ = conn.Close()
				conn = nil
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err == nil { // a new grant: the lock was lost meanwhile
			_ = conn.Do(context.Background(), "LOCK.RELEASE", l.key, l.owner).Err()
		}
		break
	}
	if conn != nil {
		_ = conn.Close()
	}
	s.once.Do(func() { close(s.done) })
	return false
}

// errRedial is what a session connection's pool answers instead of dialing
// a second connection.
var errRedial = errors.New("redlock-proxy: the session's connection broke")

// oneDial is a redis.Hook that lets its client dial once (none, once
// dialed is set).
type oneDial struct{ dialed atomic.Bool }

// DialHook implements redis.Hook.
func (o *oneDial) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if o.dialed.Swap(true) {
			return nil, errRedial
		}
		return next(ctx, network, addr)
	}
}

// ProcessHook implements redis.Hook.
func (o *oneDial) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (o *oneDial) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
