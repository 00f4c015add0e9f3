package client

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// session is a session lock's own connection and whether it still holds:
// the proxy renews the lock while that one connection is open, so a
// second connection (go-redis redials a broken one quietly) means the
// session, and the lock with it, are gone.
type session struct {
	conn   *redis.Client
	done   chan struct{}
	once   sync.Once
	dialed atomic.Bool
}

func newSession(conn *redis.Client) *session {
	s := &session{conn: conn, done: make(chan struct{})}
	conn.AddHook(s)
	return s
}

// end closes the session: Done fires and the connection closes, which
// releases the lock on the proxy if it still held it.
func (s *session) end() {
	s.once.Do(func() { close(s.done) })
	_ = s.conn.Close()
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
// broken link is noticed without a command of the holder's.
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
		if err := s.conn.Ping(context.Background()).Err(); err != nil && err != redis.ErrPoolTimeout {
			s.end()
			return
		}
	}
}

// DialHook implements redis.Hook: the second dial ends the session.
func (s *session) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if s.dialed.Swap(true) {
			s.once.Do(func() { close(s.done) })
			return nil, ErrLockNotHeld // the lock went with the first connection
		}
		return next(ctx, network, addr)
	}
}

// ProcessHook implements redis.Hook.
func (s *session) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (s *session) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
