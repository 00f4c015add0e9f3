package proxy

import (
	"crypto/subtle"
)

// authenticate finds the user a password opens. The default user is the
// requirepass one, with every key and admin rights.
func (s *Server) authenticate(name string, pass []byte) (*User, error) {
	if name == "default" {
		switch {
		case s.opts.requirePass == "" && len(s.opts.users) == 0:
			return nil, errNoPassword
		case s.opts.requirePass == "":
			return nil, errWrongPass // the default user is off when only named users exist
		case subtle.ConstantTimeCompare(pass, []byte(s.opts.requirePass)) != 1:
			return nil, errWrongPass
		}
		return &User{Name: "default", Admin: true}, nil
	}
	for i := range s.opts.users {
		u := &s.opts.users[i]
		if u.Name == name && subtle.ConstantTimeCompare(pass, []byte(u.Password)) == 1 {
			return u, nil
		}
	}
	return nil, errWrongPass
}

// allowed: every key the command touches belongs to the user's prefix. A
// known script's KEYS it never reads (unusedKeys) are not the user's
// business: a read-write lock names its readers' timeouts "{<lock>}:...",
// which a tenant's prefix does not start.
func (c *session) allowed(cmd *command, args [][]byte) bool {
	if c.prefix() == "" {
		return true // every key (no script hashed on a lock round's way)
	}
	var unused func(int) bool
	for i, k := range keysOf(cmd, args) {
		if c.owns(k) {
			continue
		}
		if unused == nil { // only for a name the prefix does not start
			unused = unusedKeys(cmd, args)
		}
		if !unused(i + 1) {
			return false
		}
	}
	return true
}

// setUser records who the connection authenticated as, and tells the
// families that follow it (a subscribed connection's deliveries follow its
// new tenant).
func (c *client) setUser(u *User) {
	c.authed, c.user = true, u
	c.s.hooks.userChanged(c)
}
