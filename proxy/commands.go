package proxy

// commandTable lists every command the proxy answers, family by family
// (families.go); it is the one place that names a family's handlers.
// Anything else gets Redis's unknown-command error: nothing a client sends
// reaches a backend except through the engine's lock operations.
func (s *Server) commandTable() map[string]*command {
	table := map[string]*command{}
	add := func(name string, arity int, flags cmdFlags, h func(*request, [][]byte), specs ...func(*command)) {
		if _, dup := table[name]; dup {
			panic("proxy: command registered twice: " + name)
		}
		cmd := &command{name: name, handler: h, arity: arity, flags: flags}
		for _, spec := range specs {
			spec(cmd)
		}
		table[name] = cmd
	}
	// Redis-style locks (lockcmds.go), through the lock operations of the lock service (lockops.go).
	add("set", -3, flagLock, s.locks.cmdSet, keys(1, 1))
	add("get", 2, flagRead, s.locks.cmdGet, keys(1, 1))
	add("pttl", 2, flagRead, s.locks.cmdPTTL, keys(1, 1))
	add("ttl", 2, flagRead, s.locks.cmdTTL, keys(1, 1))
	add("exists", -2, flagRead, s.locks.cmdExists, keys(1, -1))
	add("delex", -2, flagLock, s.locks.cmdDelEx, keys(1, 1))
	add("delifeq", 3, flagLock, s.locks.cmdDelIfEq, keys(1, 1))
	add("del", -2, flagLock, s.locks.cmdDel, keys(1, -1))
	add("unlink", -2, flagLock, s.locks.cmdDel, keys(1, -1))
	// Redisson's hash locks read by quorum (lockcmds.go; their scripts are the scripts family's).
	add("hexists", 3, flagRead, s.locks.cmdHExists, keys(1, 1))
	add("hget", 3, flagRead, s.locks.cmdHGet, keys(1, 1))
	// Scripts (scriptcmds.go: what each kind of script does; scriptbook/: which script is which).
	add("eval", -3, flagLock|flagScriptKeys, s.scripts.cmdEval, keysBy(scriptKeys))
	add("evalsha", -3, flagLock|flagScriptKeys, s.scripts.cmdEvalSHA, keysBy(scriptKeys))
	add("script", -2, 0, s.scripts.cmdScript)
	// The native lock service, with fencing tokens, sessions and waiters (nativecmds.go; its state: native.go).
	add("lock.acquire", -4, flagLock, s.native.cmdLockAcquire, keys(1, 1))
	add("lock.extend", 4, flagLock, s.native.cmdLockExtend, keys(1, 1))
	add("lock.release", 3, flagLock, s.native.cmdLockRelease, keys(1, 1))
	add("lock.token", -2, flagRead, s.native.cmdLockToken, keys(1, 1))
	// Pub/sub: lock wake-ups between replicas (pubsub.go, with its state).
	add("subscribe", -2, flagSubscribed, s.pubsub.cmdSubscribe, channelsBy(subscribeChannels))
	add("psubscribe", -2, flagSubscribed, s.pubsub.cmdSubscribe, channelsBy(subscribeChannels))
	add("unsubscribe", -1, flagSubscribed, s.pubsub.cmdUnsubscribe)
	add("punsubscribe", -1, flagSubscribed, s.pubsub.cmdUnsubscribe)
	add("publish", 3, 0, s.pubsub.cmdPublish, channelsBy(publishChannel))
	// Connection (conncmds.go, reset.go, selectdb.go; users.go and authguard.go: who may do what).
	add("ping", -1, flagSubscribed, cmdPing)
	add("echo", 2, 0, cmdEcho)
	add("quit", -1, flagNoAuth|flagSubscribed, cmdQuit)
	add("auth", -2, flagNoAuth, s.cmdAuth)
	add("hello", -1, flagNoAuth, s.cmdHello)
	add("client", -2, 0, s.cmdClient)
	add("select", 2, 0, cmdSelect)
	add("reset", 1, flagNoAuth|flagSubscribed, s.cmdReset)
	add("command", -1, 0, s.cmdCommand)
	add("cluster", -2, 0, cmdCluster)
	add("wait", 3, 0, cmdWait)
	// Administration (admin.go, info.go).
	add("info", -1, 0, s.cmdInfo)
	add("redlock", -2, 0, s.cmdRedlock, keysBy(forceUnlockKey), channelsBy(lockPrefix))
	return table
}

// keys says a command's keys are args[first] through args[last] (-1: all
// the rest).
func keys(first, last int) func(*command) {
	return func(cmd *command) { cmd.keys = keyRange{first, last} }
}

// keysBy says where a command finds its keys in its arguments.
func keysBy(at func(args [][]byte) [][]byte) func(*command) {
	return func(cmd *command) { cmd.keysAt = at }
}

// channelsBy says where a command finds the channels or patterns it names.
func channelsBy(at func(args [][]byte) [][]byte) func(*command) {
	return func(cmd *command) { cmd.channelsAt = at }
}
