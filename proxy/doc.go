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
// The files in layers, from the socket down; each calls only its own layer
// and those below:
//
//	server.go      accept, Shutdown, Close
//	conn.go        read a batch (reader.go; inline.go: telnet-style lines), admit each command
//	               (admit.go), run it (pipelined), write the replies
//	commands.go    the command table: name -> handler, arity, flags
//	lockcmds.go, scriptcmds.go, conncmds.go, pubsub.go, admin.go, info.go, users.go
//	               the handlers (scriptcmds.go: what each kind of script does)
//	lockops.go, hashops.go, rwlock.go, fairlock.go, permits.go, multikey.go, bsm.go, registered.go, grants.go
//	               the lock operations handlers share (bsm.go: bsm/redislock's
//	               scripts; rwlock.go: Redisson's RReadWriteLock's, by SHA1;
//	               fairlock.go: its RFairLock's, and who a release wakes;
//	               permits.go: its RPermitExpirableSemaphore's;
//	               registered.go: operators' scripts, in their reply convention)
//	sessions.go, sessionrenew.go, boundlocks.go
//	               connection-bound locks (SESSION, and SET NX without a TTL) and their renewer
//	state.go, request.go, selectdb.go, specoperands.go, options.go, limits.go, metrics.go, ...
//	               shared types, reply writing, a script call's operands read
//	               where its spec says (specoperands.go), tables
//	scriptbook/    what is known of each client script (a package of its own,
//	               importing nothing of this one): its SHA1, the SHA1 of its
//	               normalised text, its meaning and operand layout, client,
//	               versions and the recorded session that carries its text, never
//	               the text itself; the script families, each served whole or
//	               refused at its acquire
//	args.go, errors.go  argument parsing, and every error reply (replyText)
//	statusview.go  what the HTTP status page (internal/statuspage) reads and does:
//	               the admin check, the audited force-unlock (REDLOCK FORCEUNLOCK's
//	               own), this replica's session locks and waiters per key
package proxy
