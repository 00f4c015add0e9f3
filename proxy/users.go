package proxy

import (
	"bytes"
	"crypto/subtle"
)

// User is a named client identity limited to keys under Prefix ("" for
// all). Admin users may run the REDLOCK admin commands.
type User struct {
	Name     string
	Password string
	Prefix   string
	Admin    bool
}

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

// authRequired: a password or named users are configured.
func (o *options) authRequired() bool { return o.requirePass != "" || len(o.users) > 0 }

// allowed: every key the command touches belongs to the user's prefix.
func (c *client) allowed(cmd *command, args [][]byte) bool {
	for _, k := range keysOf(cmd, args) {
		if !c.owns(k) {
			return false
		}
	}
	return true
}

// prefix is the user's key prefix, "" for every key.
func (c *client) prefix() string {
	if c.user == nil {
		return ""
	}
	return c.user.Prefix
}

func (c *client) owns(name []byte) bool { return owns(c.prefix(), name) }

// owns reports whether a key or channel belongs to a tenant with prefix:
// the name starts with it, or the part inside its first {...} does, as in
// Redisson's redisson_lock__channel:{<lock>} and redisson_unlock_latch:{<lock>}:id.
func owns(prefix string, name []byte) bool {
	if prefix == "" || bytes.HasPrefix(name, []byte(prefix)) {
		return true
	}
	if i := bytes.IndexByte(name, '{'); i >= 0 {
		if j := bytes.IndexByte(name[i+1:], '}'); j > 0 {
			return bytes.HasPrefix(name[i+1:i+1+j], []byte(prefix))
		}
	}
	return false
}

// tenant names whose scripts, throttles and caches a connection shares: its
// user's name ("" before AUTH or without users).
func (c *client) tenant() string {
	if c.user == nil {
		return ""
	}
	return c.user.Name
}

// setUser records who the connection authenticated as; a subscribed
// connection's deliveries follow its new tenant.
func (c *client) setUser(u *User) {
	c.authed, c.user = true, u
	if c.subs.prefix.Load() != nil {
		p := c.prefix()
		c.subs.prefix.Store(&p)
	}
}
