// Package proxy is the RESP server that lock clients talk to as if it were
// one Redis. It reads commands with its own bounded reader, dispatches them
// through one command table (name -> handler, arity, flags), and turns lock
// commands into quorum rounds:
//
//	SET key value NX PX|EX ttl      -> quorum.Engine.Acquire: OK, nil (taken) or NOQUORUM
//	EVAL/EVALSHA compare-and-delete -> Release: 1, 0 (not the owner) or NOQUORUM
//	EVAL/EVALSHA compare-and-PEXPIRE-> Extend:  1, 0 or NOQUORUM
//	GET / PTTL / TTL / EXISTS       -> Read, by quorum
//	DEL / UNLINK                    -> ForceRelease (unless disabled)
//
// It never forwards a command or script to a backend: anything it does not
// recognise gets an error reply. Locks reach the backends only through the
// quorum engine; lock wake-ups (SUBSCRIBE, PUBLISH, the notices a release
// sends) go through the wake bus.
//
// A connection answers one batch of commands read together at a time, on
// its own goroutine. In a pipeline, lock and read commands on different
// keys run concurrently and commands on one key in order; anything else is
// a barrier. Replies always go out in the order the commands came.
//
// The files, from the socket down:
//
//	server.go, conn.go          accept, read a batch, run it, write the replies
//	commands.go                 the command table and dispatch
//	lockcmds.go, scriptcmds.go  the lock handlers: SET/GET/DEL..., EVAL/EVALSHA/SCRIPT
//	conncmds.go, pubsub.go, admin.go, info.go  the other handlers
//	scriptbook.go, scripts.go   what each script means and where its operands are
//	lockops.go, hashops.go, multikey.go  the lock operations handlers share
//	args.go, request.go, errors.go  argument parsing, reply writing, error replies
//
// Handlers call downward only; every error reply goes through replyText.
package proxy
