// Package proxy is the RESP server that lock clients talk to as if it were
// one Redis. It reads commands with tidwall/redcon's reader, dispatches them
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
// recognise gets an error reply. It talks to backends only through quorum.
// Each connection runs its commands in order on its own goroutine, so
// pipelined replies come back in order.
package proxy
