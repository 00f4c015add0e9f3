package proxy

import (
	"context"
	"net"
	"sync"
	"time"
)

// AUTH throttling: each failed AUTH on a connection doubles the pause before
// its answer (10 ms, 20 ms, ... up to 2 s), and a source address with many
// recent failures gets the longest pause on every further one, on any
// connection. Guessing then costs hours where it cost microseconds, while a
// client that mistyped once barely notices. Failures are logged per address
// at most every logEvery, without the password.
const (
	authPauseFirst = 10 * time.Millisecond
	authPauseMax   = 2 * time.Second
	authAddrFree   = 10          // failures per window an address may have unpaused by others
	authWindow     = time.Minute // how long an address's failures are remembered
	authLogEvery   = 10 * time.Second
	authMaxAddrs   = 10000 // addresses remembered at once
)

type authGuard struct {
	mu    sync.Mutex
	addrs map[string]*authFailures
}

type authFailures struct {
	count  int
	since  time.Time // start of the window
	logged time.Time
	quiet  int // failures not logged since
}

// failed records a failed AUTH from host, the connection's fails-th, and
// returns how long to pause before answering, and whether (and with how
// many failures) to log.
func (g *authGuard) failed(host string, fails int, now time.Time) (pause time.Duration, logIt bool, count int) {
	pause = min(authPauseFirst<<min(fails-1, 20), authPauseMax)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.addrs == nil {
		g.addrs = map[string]*authFailures{}
	}
	f := g.addrs[host]
	if f == nil || now.Sub(f.since) > authWindow {
		if len(g.addrs) >= authMaxAddrs {
			g.forgetOld(now)
		}
		f = &authFailures{since: now}
		g.addrs[host] = f
	}
	f.count++
	if f.count > authAddrFree {
		pause = authPauseMax
	}
	f.quiet++
	if now.Sub(f.logged) >= authLogEvery {
		logIt, count, f.logged, f.quiet = true, f.quiet, now, 0
	}
	return pause, logIt, count
}

// forgetOld drops addresses whose window ended; if none did, all of them:
// memory stays bounded whatever the number of sources.
func (g *authGuard) forgetOld(now time.Time) {
	for h, f := range g.addrs {
		if now.Sub(f.since) > authWindow {
			delete(g.addrs, h)
		}
	}
	if len(g.addrs) >= authMaxAddrs {
		clear(g.addrs)
	}
}

// authFailed pauses a connection whose AUTH failed and logs it (throttled).
// Without authentication configured there is nothing to guess: no pause.
func (s *Server) authFailed(c *request, user string) {
	if !s.opts.authRequired() {
		return
	}
	c.conn.authFails++
	host, _, err := net.SplitHostPort(c.conn.nc.RemoteAddr().String())
	if err != nil {
		host = c.conn.nc.RemoteAddr().String()
	}
	pause, logIt, count := s.auth.failed(host, c.conn.authFails, time.Now())
	if logIt {
		s.opts.logger.Warn("AUTH failed", "addr", host, "user", user, "failures", count, "pause", pause.String())
	}
	sleep(c.ctx, pause)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
