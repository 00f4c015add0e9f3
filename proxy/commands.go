package proxy

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
	// Native locks, with fencing tokens.
	add("lock.acquire", -4, flagLock, s.cmdLockAcquire)
	add("lock.extend", 4, flagLock, s.cmdLockExtend)
	add("lock.release", 3, flagLock, s.cmdLockRelease)
	add("lock.token", -2, flagRead, s.cmdLockToken)
	// Lock wake-ups.
	add("subscribe", -2, 0, s.pubsub.cmdSubscribe)
	add("psubscribe", -2, 0, s.pubsub.cmdSubscribe)
	add("unsubscribe", -1, 0, s.pubsub.cmdUnsubscribe)
	add("punsubscribe", -1, 0, s.pubsub.cmdUnsubscribe)
	add("publish", 3, 0, s.pubsub.cmdPublish)
	// Connection and server.
	add("ping", -1, 0, cmdPing)
	add("echo", 2, 0, cmdEcho)
	add("quit", -1, flagNoAuth, cmdQuit)
	add("auth", -2, flagNoAuth, s.cmdAuth)
	add("hello", -1, flagNoAuth, s.cmdHello)
	add("client", -2, 0, s.cmdClient)
	add("select", 2, 0, cmdSelect)
	add("reset", 1, flagNoAuth, s.cmdReset)
	add("info", -1, 0, s.cmdInfo)
	add("command", -1, 0, s.cmdCommand)
	add("cluster", -2, 0, cmdCluster)
	add("wait", 3, 0, cmdWait)
	// Administration.
	add("redlock", -2, 0, s.cmdRedlock)
	return table
}
