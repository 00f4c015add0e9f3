package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/wire"

	"context"
	"errors"
	"net"
	"time"

	"github.com/tidwall/redcon"
)

func newClient(s *Server, nc net.Conn) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		s:       s,
		nc:      nc,
		rd:      wire.NewReader(nc, s.opts.MaxRequestSize, s.opts.MaxArgs),
		wr:      redcon.NewWriter(nc),
		ctx:     ctx,
		cancel:  cancel,
		id:      s.nextID.Add(1),
		created: time.Now(),
		session: session{authed: !s.opts.authRequired(), proto: 2},
	}
}

func (c *client) serve() {
	defer func() {
		// A bug outside a command handler costs this connection, not the
		// proxy: handlers recover their own panics in dispatch.
		if r := recover(); r != nil {
			c.s.logPanic("connection panicked; closed it", r)
		}
		c.cancel()
		_ = c.nc.Close()
		c.s.hooks.connClosed(c) // its subscriptions and its connection-bound locks go with it
		c.s.forget(c)
	}()
	for {
		if c.s.opts.IdleTimeout > 0 {
			c.armIdle()
		}
		if !c.backOff() { // its user's refusals past their budget
			return
		}
		cmds, err := c.rd.ReadCommands()
		if err != nil {
			c.readFailed(err)
			return
		}
		arrived := time.Now() // the callers' windows opened no later than this
		if !c.begin() {
			return
		}
		c.pushMu.Lock()
		c.run(cmds, arrived)
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
		err = c.wr.Flush()
		c.pushMu.Unlock()
		if !c.end() || err != nil || c.quit {
			return
		}
	}
}

// armIdle arms the idle timeout for the read that follows. As Redis spares
// subscribers and blocked clients its timeout, an idle connection holding
// session or connection-bound locks is not closed: closing it would
// release them under their holder. Checked again once the deadline is set:
// the last lock may have left between the check and the set, and unheld's
// deadline been overwritten with none (helper-73).
func (c *client) armIdle() {
	spared := func() bool { return c.subscribed.Load() > 0 || c.s.hooks.keepsConn(c) }
	for {
		var deadline time.Time
		was := spared()
		if !was {
			deadline = time.Now().Add(c.s.opts.IdleTimeout)
		}
		_ = c.nc.SetReadDeadline(deadline)
		if !was || spared() {
			return
		}
	}
}

// unheld re-arms the idle timeout of a connection whose last session lock
// left the book by other means than its own command (lost, moved by a
// re-attach elsewhere, force-released): it waits in its read with no
// deadline, armed when that read began while it held the lock. A batch
// running, or a subscriber, re-arms its own when it next reads.
func (c *client) unheld() {
	if c.s.opts.IdleTimeout <= 0 || c.subscribed.Load() > 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.busy && !c.closed {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IdleTimeout))
	}
}

// readFailed answers a malformed or oversized request before the connection
// closes; a closed or timed-out connection gets nothing.
func (c *client) readFailed(err error) {
	var (
		reply error
		perr  wire.ProtocolError
	)
	switch {
	case errors.Is(err, wire.ErrRequestTooLarge):
		reply = respError("ERR Protocol error: request larger than max_request_size")
	case errors.As(err, &perr):
		reply = respError("ERR " + perr.Error())
	default:
		return
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.wr.WriteError(replyText(reply))
	_ = c.wr.Flush()
}

// begin marks a batch running; false if Shutdown closed the connection first.
func (c *client) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = !c.closed
	return c.busy
}

// end marks the batch answered; false if the server is shutting down.
func (c *client) end() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = false
	if c.s.isClosing() {
		c.closed = true
	}
	return !c.closed
}

// closeIfIdle closes the connection unless a batch is running (that batch
// closes it once answered). The caller holds s.mu.
func (c *client) closeIfIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.busy && !c.closed {
		c.closed = true
		_ = c.nc.Close()
	}
}

// maxConcurrentRounds caps the rounds one connection's pipeline runs at once.
const maxConcurrentRounds = 256

// run answers one batch of commands read together. A lone command runs in
// place. In a pipeline, lock and read commands with one key run concurrently,
// each writing to its own buffer, while commands on the same key keep their
// order; any other command (AUTH, SELECT, SCRIPT, multi-key, unknown...) is a
// barrier that runs after everything before it and before anything after
// it. Each command is admitted here, in order, before it runs: the
// connection's books are kept by this goroutine alone. Replies go out in the
// order the commands came.
func (c *client) run(cmds []redcon.Command, arrived time.Time) {
	if len(cmds) == 1 {
		r := c.newRequest(c.wr, arrived)
		c.dispatch(r, cmds[0].Args)
		r.settle()
		return
	}
	var (
		replies = make([]*request, 0, len(cmds))
		running []chan struct{} // since the last barrier
		lastFor = map[string]chan struct{}{}
		slots   = make(chan struct{}, maxConcurrentRounds)
	)
	waitAll := func() {
		for _, done := range running {
			<-done
		}
		running = running[:0]
		clear(lastFor)
	}
	for _, args := range cmds {
		r := c.newRequest(redcon.NewWriter(nil), arrived)
		replies = append(replies, r)
		cmd := c.admit(r, args.Args)
		if cmd == nil {
			if c.quit {
				break
			}
			continue
		}
		key, ok := concurrentKey(cmd, args.Args)
		if !ok {
			waitAll()
			c.s.execute(r, cmd, args.Args)
			if c.quit {
				break
			}
			continue
		}
		prev, done := lastFor[key], make(chan struct{})
		lastFor[key] = done
		running = append(running, done)
		slots <- struct{}{}
		go func(args [][]byte) {
			defer func() { <-slots; close(done) }()
			if prev != nil {
				<-prev
			}
			c.s.execute(r, cmd, args)
		}(args.Args)
	}
	waitAll()
	for _, r := range replies {
		r.settle()
		c.wr.WriteRaw(r.wr.Buffer())
	}
}

// concurrentKey returns the one key a lock or read command touches, if it is
// one that may run beside others.
func concurrentKey(cmd *command, args [][]byte) (string, bool) {
	if !cmd.concurrent() || len(args) < 2 {
		return "", false
	}
	if keys := keysOf(cmd, args); len(keys) == 1 {
		return string(keys[0]), true
	}
	return "", false
}
