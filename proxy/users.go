package proxy

import (
	"bytes"
	"crypto/subtle"
	"strconv"
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

// keysOf lists the keys a command touches, as Redis's key specs say. It
// takes any argument list, arity not yet checked: the pipeline scheduler
// asks before dispatch does.
func keysOf(cmd *command, args [][]byte) [][]byte {
	switch cmd.name {
	case "set", "get", "pttl", "ttl", "delex", "delifeq":
		if len(args) >= 2 {
			return args[1:2]
		}
	case "exists", "del", "unlink":
		if len(args) >= 2 {
			return args[1:]
		}
	case "eval", "evalsha":
		if len(args) < 3 {
			return nil
		}
		if n, err := strconv.Atoi(string(args[2])); err == nil && n >= 0 && n <= len(args)-3 {
			return args[3 : 3+n]
		}
	case "redlock":
		if len(args) >= 3 && equalFold(args[1], "forceunlock") {
			return args[2:3]
		}
	}
	return nil
}

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
