package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/tidwall/redcon"
)

func newClient(s *Server, nc net.Conn) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		s:       s,
		nc:      nc,
		rd:      newCommandReader(nc, s.opts.MaxRequestSize, s.opts.MaxArgs),
		wr:      redcon.NewWriter(nc),
		ctx:     ctx,
		cancel:  cancel,
		id:      s.nextID.Add(1),
		created: time.Now(),
		authed:  !s.opts.authRequired(),
		proto:   2,
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
		c.unsubscribeAll()
		c.s.sessions.closed(c) // its connection-bound locks go with it
		c.s.forget(c)
	}()
	for {
		if c.s.opts.IdleTimeout > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IdleTimeout))
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

// readFailed answers a malformed or oversized request before the connection
// closes; a closed or timed-out connection gets nothing.
func (c *client) readFailed(err error) {
	var reply error
	switch {
	case errors.Is(err, errRequestTooLarge):
		reply = respError("ERR Protocol error: request larger than max_request_size")
	case strings.HasPrefix(err.Error(), "Protocol error"): // redcon's parse errors
		reply = respError("ERR " + err.Error())
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
// it. Replies go out in the order the commands came.
func (c *client) run(cmds []redcon.Command, arrived time.Time) {
	if len(cmds) == 1 {
		r := c.newRequest(c.wr, arrived)
		c.s.dispatch(r, cmds[0].Args)
		r.settle()
		return
	}
	var (
		replies = make([]*request, len(cmds))
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
	for i, cmd := range cmds {
		replies[i] = c.newRequest(redcon.NewWriter(nil), arrived)
		key, ok := c.s.concurrentKey(cmd.Args)
		if !ok {
			waitAll()
			c.s.dispatch(replies[i], cmd.Args)
			if c.quit {
				replies = replies[:i+1]
				break
			}
			continue
		}
		prev, done := lastFor[key], make(chan struct{})
		lastFor[key] = done
		running = append(running, done)
		slots <- struct{}{}
		go func(r *request, args [][]byte) {
			defer func() { <-slots; close(done) }()
			if prev != nil {
				<-prev
			}
			c.s.dispatch(r, args)
		}(replies[i], cmd.Args)
	}
	waitAll()
	for _, r := range replies {
		r.settle()
		c.wr.WriteRaw(r.wr.Buffer())
	}
}

// concurrentKey returns the one key a lock or read command touches, if it is
// one that may run beside others.
func (s *Server) concurrentKey(args [][]byte) (string, bool) {
	cmd := s.lookup(args[0])
	if cmd == nil || cmd.flags&(flagLock|flagRead) == 0 || len(args) < 2 {
		return "", false
	}
	if keys := keysOf(cmd, args); len(keys) == 1 {
		return string(keys[0]), true
	}
	return "", false
}

// maxPreAuthCommands is how many commands a connection may send before it
// authenticates (when authentication is required); more closes it.
const maxPreAuthCommands = 32

// dispatch runs one command: lookup, arity, auth, then the handler, with a
// panic in the handler turned into an error reply for that command alone.
func (s *Server) dispatch(c *request, args [][]byte) {
	s.metrics.commands.Add(1)
	cmd := s.lookup(args[0])
	if !c.authed {
		// Before AUTH a peer is anyone: it gets a few answers (its handshake
		// and AUTH), not unbounded work.
		if c.preAuth++; c.preAuth > maxPreAuthCommands {
			c.writeErr(respError(fmt.Sprintf("ERR more than %d commands before AUTH; closing the connection", maxPreAuthCommands)))
			c.quit = true
			return
		}
	}
	switch {
	case cmd == nil:
		c.writeErr(unknownCommand(args))
		return
	case cmd.arity > 0 && len(args) != cmd.arity, cmd.arity < 0 && len(args) < -cmd.arity:
		c.writeErr(errWrongArity(cmd.name))
		return
	case !c.authed && cmd.flags&flagNoAuth == 0:
		c.writeErr(errNoAuth)
		return
	case reservedIn(cmd, args):
		c.writeErr(errReserved) // whoever asks: see reserved.go
		return
	case !c.allowed(cmd, args):
		c.writeErr(errNoPerm)
		return
	case c.proto == 2 && c.subCount() > 0 && !subscribedOnly[cmd.name]:
		c.writeErr(errSubscribed(cmd.name))
		return
	}
	c.lastCmd.Store(cmd)
	if cmd.flags&(flagLock|flagRead) != 0 {
		s.metrics.inflight.Add(1)
		defer s.metrics.inflight.Add(-1)
	}
	mark := len(c.wr.Buffer())
	defer func() {
		if r := recover(); r != nil {
			s.logPanic("command panicked", r, "command", cmd.name)
			c.wr.SetBuffer(c.wr.Buffer()[:mark]) // drop a half-written reply
			c.writeErr(respError(fmt.Sprintf("ERR internal error in '%s'; the proxy logged it", cmd.name)))
		}
	}()
	cmd.handler(c, args)
}
