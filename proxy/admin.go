package proxy

import (
	"fmt"
	"strconv"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// cmdRedlock: the admin commands.
//
//	REDLOCK LOCKS [prefix [limit]]  locks a quorum holds: [key, owner, ttl ms] each
//	REDLOCK FORCEUNLOCK key         delete a lock whoever holds it; audited in the log
//
// They need an admin: the default user (requirepass), a user with admin:
// true, or anyone when no authentication is configured.
func (s *Server) cmdRedlock(c *request, args [][]byte) {
	sub := args[1]
	if isHelp(args) { // for everyone, as in Redis
		c.writeHelp("REDLOCK")
		return
	}
	if !(equalFold(sub, "locks") || equalFold(sub, "forceunlock")) {
		c.writeErr(unknownSubcommand(sub, "REDLOCK"))
		return
	}
	if !c.isAdmin() {
		c.writeErr(respError(fmt.Sprintf("NOPERM this user has no permissions to run the 'redlock|%s' command", string(sub))))
		return
	}
	switch {
	case equalFold(sub, "locks") && len(args) <= 4:
		prefix, limit := "", 1000
		if len(args) >= 3 {
			prefix = string(args[2])
		}
		if len(args) == 4 {
			n, err := strconv.Atoi(string(args[3]))
			if err != nil || n < 1 {
				c.writeErr(errNotInteger)
				return
			}
			limit = n
		}
		// The connection's database's locks, by the keys its clients named.
		locks, err := s.engine.Locks(c.ctx, quorum.NamespaceKey(c.db, prefix), limit)
		if err != nil {
			c.writeErr(err)
			return
		}
		mine := locks[:0]
		for _, l := range locks {
			if k, ok := inDB(c.db, l.Key); ok {
				l.Key = k
				mine = append(mine, l)
			}
		}
		c.wr.WriteArray(len(mine))
		for _, l := range mine {
			c.wr.WriteArray(3)
			c.wr.WriteBulkString(l.Key)
			c.wr.WriteBulkString(l.Owner)
			c.wr.WriteInt64(l.TTL.Milliseconds())
		}
	case equalFold(sub, "forceunlock") && len(args) == 3:
		user := "default"
		if c.user != nil {
			user = c.user.Name
		}
		existed, err := s.ForceUnlock(c.ctx, user, c.conn.nc.RemoteAddr().String(), string(args[2]))
		if err != nil {
			c.writeErr(err)
			return
		}
		c.wr.WriteInt(boolInt(existed))
	default:
		c.writeErr(errWrongArity("redlock|" + string(sub)))
	}
}

// isAdmin: the default user, a user with admin: true, or anyone when no
// authentication is configured. Only an admin may run REDLOCK or see the
// backends' run_ids in INFO.
func (c *request) isAdmin() bool {
	return !c.s.opts.authRequired() || c.user != nil && c.user.Admin
}

// forceUnlockKey is the key REDLOCK FORCEUNLOCK names, lockPrefix the
// prefix REDLOCK LOCKS lists under (its reserved names are checked as a
// channel's).
func forceUnlockKey(args [][]byte) [][]byte {
	if len(args) >= 3 && equalFold(args[1], "forceunlock") {
		return args[2:3]
	}
	return nil
}

func lockPrefix(args [][]byte) [][]byte {
	if len(args) >= 3 && equalFold(args[1], "locks") {
		return args[2:3]
	}
	return nil
}
