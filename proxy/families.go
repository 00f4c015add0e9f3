package proxy

// Families: the commands come in families (connection, Redis-style locks,
// scripts, Redisson's hash locks, the native lock service, pub/sub,
// administration), each with its handlers in its own files and its state
// in its own type; commands.go is the one table that names them. The core
// (accept, read, admit, dispatch, write) calls a family only through its
// entries in that table and through the hooks below, which a family
// implements for what it keeps per connection.

// connCloser is a family that keeps state for a connection: connClosed
// runs once the connection is closed and its last batch answered.
type connCloser interface{ connClosed(c *client) }

// connResetter is a family whose per-connection state RESET clears.
type connResetter interface{ connReset(c *client) }

// userChanger is a family that follows who a connection is signed in as
// (AUTH, HELLO AUTH).
type userChanger interface{ userChanged(c *client) }

// connKeeper is a family that holds something of a connection's that the
// idle timeout must not close it under (its session locks), as Redis
// spares blocked clients and subscribers.
type connKeeper interface{ keepsConn(c *client) bool }

// hooks are the families' hooks, in table order.
type hooks struct {
	closers   []connCloser
	resetters []connResetter
	users     []userChanger
	keepers   []connKeeper
}

// hook collects what each family implements.
func (h *hooks) hook(families ...any) {
	for _, f := range families {
		if x, ok := f.(connCloser); ok {
			h.closers = append(h.closers, x)
		}
		if x, ok := f.(connResetter); ok {
			h.resetters = append(h.resetters, x)
		}
		if x, ok := f.(userChanger); ok {
			h.users = append(h.users, x)
		}
		if x, ok := f.(connKeeper); ok {
			h.keepers = append(h.keepers, x)
		}
	}
}

func (h *hooks) connClosed(c *client) {
	for _, x := range h.closers {
		x.connClosed(c)
	}
}

func (h *hooks) connReset(c *client) {
	for _, x := range h.resetters {
		x.connReset(c)
	}
}

func (h *hooks) userChanged(c *client) {
	for _, x := range h.users {
		x.userChanged(c)
	}
}

func (h *hooks) keepsConn(c *client) bool {
	for _, x := range h.keepers {
		if x.keepsConn(c) {
			return true
		}
	}
	return false
}
