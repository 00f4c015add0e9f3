package proxy

import (
	"errors"
	"net"
	"os"
	"time"
)

// While a command blocks (LOCK.ACQUIRE ... WAIT), nothing reads the
// connection, so a client that hangs up would go unnoticed until the wait
// ends, keeping its place in the lock's queue. A watch reads the socket
// meanwhile: end of stream or a broken link cancels the connection's
// context (and so every wait on it); bytes the client sends meanwhile (its
// next commands) are kept for the reader, and the watch stops there.

// watchHangup starts the connection's hang-up watch, or joins it if one of
// its pipelined commands started it; the returned func leaves it, and the
// last to leave stops it.
func (c *client) watchHangup() (leave func()) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.watchers++
	if c.watchers == 1 {
		_ = c.nc.SetReadDeadline(time.Time{}) // a blocked command is not idle
		c.watchDone = make(chan struct{})
		go c.watch(c.watchDone)
	}
	return func() {
		c.watchMu.Lock()
		defer c.watchMu.Unlock()
		if c.watchers--; c.watchers > 0 {
			return
		}
		_ = c.nc.SetReadDeadline(time.Now()) // wakes the watch's Read
		<-c.watchDone
		_ = c.nc.SetReadDeadline(time.Time{})
	}
}

// watch reads until the connection breaks (cancelling it), bytes arrive
// (kept for the reader) or the read deadline is set to now (the watch ends).
func (c *client) watch(done chan struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	n, err := c.nc.Read(buf)
	if n > 0 {
		c.rd.pending = append(c.rd.pending, buf[:n]...)
		return
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return
	}
	c.cancel() // hung up: the waits end, the connection closes after
}
