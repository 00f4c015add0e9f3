package proxy

import "fmt"

// Admitting a command (auth, arity, permissions) and running its handler.

// maxPreAuthCommands is how many commands a connection may send before it
// authenticates (when authentication is required); more closes it.
const maxPreAuthCommands = 32

// admit looks a command up and checks it (auth, arity, permissions) on the
// connection's goroutine, in order, writing the refusal if there is one:
// the command to run, or nil.
func (c *client) admit(r *request, args [][]byte) *command {
	c.s.metrics.commands.Add(1)
	cmd := c.s.lookup(args[0])
	if !c.authed {
		// Before AUTH a peer is anyone: it gets a few answers (its handshake
		// and AUTH), not unbounded work.
		if c.preAuth++; c.preAuth > maxPreAuthCommands {
			r.writeErr(respError(fmt.Sprintf("ERR more than %d commands before AUTH; closing the connection", maxPreAuthCommands)))
			c.quit = true
			return nil
		}
	}
	switch {
	case cmd == nil:
		r.writeErr(unknownCommand(args))
		return nil
	case cmd.arity > 0 && len(args) != cmd.arity, cmd.arity < 0 && len(args) < -cmd.arity:
		r.writeErr(errWrongArity(cmd.name))
		return nil
	case !c.authed && cmd.flags&flagNoAuth == 0:
		r.writeErr(errNoAuth)
		return nil
	case reservedIn(cmd, args):
		r.writeErr(errReserved) // whoever asks: see reserved.go
		return nil
	case !c.allowed(cmd, args):
		r.writeErr(errNoPerm)
		return nil
	case c.proto == 2 && c.subscribed.Load() > 0 && cmd.flags&flagSubscribed == 0:
		r.writeErr(errSubscribed(cmd.name))
		return nil
	}
	c.mapKeys(cmd, args) // judged as the client named them, run in its database
	c.lastCmd.Store(cmd)
	if !cmd.concurrent() {
		r.conn = c // it runs alone: it may change the session
	}
	return cmd
}

// dispatch admits and runs one command in place.
func (c *client) dispatch(r *request, args [][]byte) {
	if cmd := c.admit(r, args); cmd != nil {
		c.s.execute(r, cmd, args)
	}
}

// execute runs an admitted command's handler, with a panic turned into an
// error reply for that command alone. Lock and read commands may run
// beside others of the pipeline: they get the session's copy only.
func (s *Server) execute(c *request, cmd *command, args [][]byte) {
	if cmd.concurrent() {
		s.metrics.inflight.Add(1)
		defer func() {
			s.metrics.inflight.Add(-1)
			s.metrics.roundsDone.Add(1)
		}()
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
