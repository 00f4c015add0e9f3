// Package proxy is the RESP server that lock clients talk to as if it were
// one Redis. It reads commands with its own bounded reader, dispatches them
// through one command table (name -> handler, arity, flags), and turns lock
// commands into quorum rounds:
//
//	SET key value NX PX|EX ttl      -> quorum.Engine.Acquire: OK, nil (taken) or NOQUORUM
//	SET key value NX (no TTL)       -> AcquireBound: a connection-bound lock, renewed as a
//	                                   SESSION lock while the connection lives (boundlocks.go)
//	EVAL/EVALSHA compare-and-delete -> Release: 1, 0 (not the owner) or NOQUORUM
//	EVAL/EVALSHA compare-and-PEXPIRE-> Extend:  1, 0 or NOQUORUM
//	GET / PTTL / TTL / EXISTS       -> Read, by quorum
//	DEL / UNLINK                    -> ForceRelease (unless disabled)
//
// It never forwards a command or script to a backend: anything it does not
// recognise gets an error reply. No command may name a key or channel under
// the engine's prefix, __redlock:, whoever sends it (reserved.go: one check
// in dispatch), and a key or channel belongs to exactly one user
// (request.go, owns). Databases 0-15 (SELECT n, and scripts that SELECT
// their ARGV[1]) are separate lock namespaces: a key is mapped into its
// database after those checks, and shown to clients as they named it
// (selectdb.go). Locks reach the backends only through the
// quorum engine; lock wake-ups (SUBSCRIBE, PUBLISH, the notices a release
// sends) go through the wake bus.
//
// A connection answers one batch of commands read together at a time, on
// its own goroutine. In a pipeline, lock and read commands on different
// keys run concurrently and commands on one key in order; anything else is
// a barrier. Every command is admitted (auth, arity, permissions, the
// pre-AUTH count) on the connection's goroutine in order before it runs;
// lock and read commands get a copy of the session, not the connection, so
// they cannot change it. Replies always go out in the order the commands came.
//
// The core and the command families. The core reads, admits, dispatches
// and answers; it names no command (TestCoreNamesNoCommand): what it needs
// to know of one (arity, flags, where its keys and channels are) is in its
// entry of the command table. The families each keep their handlers in
// their own files and their state in their own type, and know each other
// only where one runs another's operations (the lock families run theirs
// through the lock service). CONTRIBUTING.md shows how to add a command.
//
//	core            server.go (accept, Shutdown, Close); conn.go (read a batch with wire/, a
//	                package of its own; run it, pipelined; write the replies); admit.go (auth,
//	                arity, permissions, reserved names: reserved.go, databases:
//	                selectdb.go, keys: keys.go); state.go, request.go (the server, a
//	                connection, a request, reply writing); grants.go (a reply's
//	                validity: settle); families.go (the families' hooks: a connection
//	                closed, RESET, a new user, what the idle timeout spares); errors.go,
//	                args.go, limits.go, options.go, metrics.go, refusals.go, users.go
//	                (who may do what), authguard.go, quota.go, hangup.go, panics.go
//	commands.go     the command table, family by family: name -> handler, arity, flags,
//	                keys, channels
//	connection      conncmds.go (PING, ECHO, QUIT, AUTH, HELLO, CLIENT, COMMAND, CLUSTER,
//	                WAIT), connstate.go (SELECT, RESET), help.go: the server's
//	                own commands, on the core's state (connections, auth, the table)
//	Redis-style     redislocks.go (redisLocks: no state of its own), lockcmds.go (SET, GET,
//	locks           PTTL, TTL, EXISTS, DEL, UNLINK, DELEX, DELIFEQ, HEXISTS, HGET), setargs.go
//	scripts         scripts.go (scriptService: its state, the script registry),
//	                scriptcmds.go (EVAL, EVALSHA, SCRIPT: what each kind of script does),
//	                specoperands.go (a call's operands, where its spec says), registered.go
//	                (operators' scripts), hashops.go, hashlease.go (Redisson's RLock),
//	                rwlock.go, fairlock.go, permits.go, multikey.go, bsm.go. Which script
//	                is which: scriptbook/, a package of its own importing nothing of
//	                this one (each client script as facts, never its text; the script
//	                families, served whole or refused)
//	lock service    native.go (lockService: its state, the session book and the waiters),
//	                nativecmds.go (LOCK.ACQUIRE, LOCK.EXTEND, LOCK.RELEASE, LOCK.TOKEN),
//	                sessions.go, sessionbook.go, sessionlimits.go, sessionrenew.go,
//	                renewal_order.go, boundlocks.go (SESSION, and SET NX without a TTL),
//	                reattach.go, waits.go, beats.go, and lockops.go: the releases, extends
//	                and force releases the other lock families run through it, which
//	                unbook a session lock and wake its waiters
//	pub/sub         pubsub.go (SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE, PUBLISH;
//	                subscriber.go: one connection's subscriptions and its pushes;
//	                pubSub: every connection's subscriber)
//	administration  admin.go (REDLOCK LOCKS, REDLOCK FORCEUNLOCK), info.go (INFO),
//	                statusview.go (what the HTTP status page, internal/statuspage, reads
//	                and does: the admin check, the audited force-unlock, this replica's
//	                session locks and waiters per key): on the core's state and the
//	                families' counts
package proxy
