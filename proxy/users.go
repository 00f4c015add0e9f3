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

var errNoPerm = respError("NOPERM this user has no permissions to access one of the keys used as arguments")

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

// allowed: every key the command touches lies under the user's prefix.
func (c *client) allowed(cmd *command, args [][]byte) bool {
	if c.user == nil || c.user.Prefix == "" {
		return true
	}
	for _, k := range keysOf(cmd, args) {
		if !bytes.HasPrefix(k, []byte(c.user.Prefix)) {
			return false
		}
	}
	return true
}

// tenant names whose scripts, throttles and caches a connection shares: its
// user's name ("" before AUTH or without users).
func (c *client) tenant() string {
	if c.user == nil {
		return ""
	}
	return c.user.Name
}
