package proxy

import (
	"bytes"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Reserved names. Everything the engine keeps on the backends (fencing
// counters, deployment markers, the notes beside locks, fair queues) and the
// proxy's own wake-up channels start with quorum.InternalPrefix,
// "__redlock:". No client command may name one, whoever sends it (the
// default user and admins included, REDLOCK FORCEUNLOCK included): not as
// a key (any command's keys, a script's KEYS: Redisson's channel, latch and
// token names among them), not as a channel (SUBSCRIBE, PUBLISH, the
// channel a script publishes on), not as a pattern that starts with it.
// dispatch refuses the command with errReserved before any handler runs
// (reservedIn); a channel a script names in its ARGV is refused the same way
// by mayNotify. A pattern that might match a reserved channel without
// starting with the prefix (PSUBSCRIBE * or __redlock*) is allowed, but never
// delivers one: Deliver drops reserved channels. So nothing a client sends
// can write, read, delete, script or hear the engine's bookkeeping.

var reservedPrefix = []byte(quorum.InternalPrefix)

var errReserved = respError("NOPERM keys and channels starting with '" + quorum.InternalPrefix +
	"' are reserved for the proxy's own bookkeeping: no command may name them")

// reserved reports whether a key, channel or pattern is the proxy's own.
func reserved(name []byte) bool { return bytes.HasPrefix(name, reservedPrefix) }

// reservedIn reports whether a command names a reserved key, channel or
// pattern in its arguments: every key keysOf finds, the channels of
// SUBSCRIBE and PUBLISH, the patterns of PSUBSCRIBE and the prefix of
// REDLOCK LOCKS.
func reservedIn(cmd *command, args [][]byte) bool {
	for _, n := range keysOf(cmd, args) {
		if reserved(n) {
			return true
		}
	}
	if cmd.channelsAt == nil {
		return false
	}
	for _, n := range cmd.channelsAt(args) {
		if reserved(n) {
			return true
		}
	}
	return false
}
