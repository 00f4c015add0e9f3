package proxy

import (
	"sync/atomic"

	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// lockService is the native lock service and the lock operations every
// lock family shares: LOCK.ACQUIRE, LOCK.EXTEND, LOCK.RELEASE and
// LOCK.TOKEN (nativecmds.go), session and connection-bound locks and their
// renewer (sessions.go, sessionbook.go, sessionlimits.go, sessionrenew.go,
// boundlocks.go), re-attach (reattach.go), waiters in fair queues (waits.go,
// beats.go), and the releases, extends and force releases the Redis-style
// and script families run through it (lockops.go), which unbook a session
// lock and wake its waiters. It owns the session book and the waiters; the
// core reaches it through the command table and its hooks (a connection
// closed: its session locks go).
type lockService struct {
	engine  *quorum.Engine
	opts    *options
	metrics *Metrics
	bus     *wake.Bus
	quotas  *quotas      // each user's session locks and waiters
	leaving *atomic.Bool // the server's graceful shutdown: session locks are left to their TTL

	sessions  sessions        // connection-bound locks and their renewer
	beats     beater          // the parked waiters' batched queue beats
	waiting   atomic.Int64    // LOCK.ACQUIRE ... WAIT requests waiting now
	waiters   waiters         // the same, per key (the status page)
	stopWaits <-chan struct{} // the server's stopping: closed when it stops accepting
}

// connClosed: a closed connection's session and connection-bound locks go
// with it.
func (s *lockService) connClosed(c *client) { s.sessions.closed(c) }

// keepsConn: the idle timeout spares a connection that holds session or
// connection-bound locks (closing it would release them under their holder).
func (s *lockService) keepsConn(c *client) bool { return s.sessions.holds(c) }
