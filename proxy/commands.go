package proxy

import (
	"fmt"
)

// commandTable lists every command the proxy answers. Anything else gets
// Redis's unknown-command error: nothing a client sends reaches a backend
// except through the engine's lock operations.
func (s *Server) commandTable() map[string]*command {
	table := map[string]*command{}
	add := func(name string, arity int, flags cmdFlags, h func(*request, [][]byte)) {
		if _, dup := table[name]; dup {
			panic("proxy: command registered twice: " + name)
		}
		table[name] = &command{name: name, handler: h, arity: arity, flags: flags}
	}
	// Locks.
	add("set", -3, flagLock, s.cmdSet)
	add("eval", -3, flagLock, s.cmdEval)
	add("evalsha", -3, flagLock, s.cmdEvalSHA)
	add("script", -2, 0, s.cmdScript)
	add("get", 2, flagRead, s.cmdGet)
	add("pttl", 2, flagRead, s.cmdPTTL)
	add("ttl", 2, flagRead, s.cmdTTL)
	add("exists", -2, flagRead, s.cmdExists)
	add("delex", -2, flagLock, s.cmdDelEx)
	add("delifeq", 3, flagLock, s.cmdDelIfEq)
	add("del", -2, flagLock, s.cmdDel)
	add("unlink", -2, flagLock, s.cmdDel)
	add("hexists", 3, flagRead, s.cmdHExists)
	add("hget", 3, flagRead, s.cmdHGet)
	// Lock wake-ups.
	add("subscribe", -2, 0, s.cmdSubscribe)
	add("psubscribe", -2, 0, s.cmdSubscribe)
	add("unsubscribe", -1, 0, s.cmdUnsubscribe)
	add("punsubscribe", -1, 0, s.cmdUnsubscribe)
	add("publish", 3, 0, s.cmdPublish)
	// Connection and server.
	add("ping", -1, 0, cmdPing)
	add("echo", 2, 0, cmdEcho)
	add("quit", -1, flagNoAuth, cmdQuit)
	add("auth", -2, flagNoAuth, s.cmdAuth)
	add("hello", -1, flagNoAuth, s.cmdHello)
	add("client", -2, 0, s.cmdClient)
	add("select", 2, 0, cmdSelect)
	add("info", -1, 0, s.cmdInfo)
	add("command", -1, 0, s.cmdCommand)
	add("cluster", -2, 0, cmdCluster)
	add("wait", 3, 0, cmdWait)
	// Administration.
	add("redlock", -2, 0, s.cmdRedlock)
	return table
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
