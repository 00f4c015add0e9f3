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
// meanwhile, for as long as the command blocks: end of stream or a broken
// link cancels the connection's context (and so every wait on it), however
// many bytes came before it. Bytes the client sends meanwhile (its next
// commands) are kept for the reader; more than watchBuffered of them while
// one command blocks close the connection (no client pipelines that much
// behind a blocked command), so a dead peer is always seen.

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

// watchBuffered bounds what a watch keeps for the reader: four requests
// of the largest size the reader accepts.
func (c *client) watchBuffered() int { return 4 * max(c.s.opts.MaxRequestSize, 4096) }

// watch reads until the connection breaks or sends more than watchBuffered
// (cancelling it), or the read deadline is set to now (the watch ends).
// Bytes that arrive meanwhile are kept for the reader, and it reads on:
// a hang-up after them is a hang-up still.
func (c *client) watch(done chan struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	for {
		n, err := c.nc.Read(buf)
		if n > 0 {
			if c.rd.Keep(buf[:n]) > c.watchBuffered() {
				c.s.opts.logger.Warn("client sent too much while a command blocked; closed its connection", "client", c.id)
				c.cancel()
				_ = c.nc.Close()
				return
			}
		}
		var ne net.Error
		switch {
		case err == nil:
			continue
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
			return
		}
		c.cancel() // hung up: the waits end, the connection closes after
		return
	}
}
