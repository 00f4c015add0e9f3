package proxy

import (
	"fmt"
	"strconv"
	"time"
)

// version is the Redis version the proxy reports; clients gate features on it.
const version = "7.0.15"

func cmdPing(c *request, args [][]byte) {
	if c.proto == 2 && c.conn.subscribed.Load() > 0 { // RESP2 while subscribed: a pong push
		c.wr.WriteArray(2)
		c.wr.WriteBulkString("pong")
		if len(args) > 1 {
			c.wr.WriteBulk(args[1])
		} else {
			c.wr.WriteBulkString("")
		}
		return
	}
	switch len(args) {
	case 1:
		c.wr.WriteString("PONG")
	case 2:
		c.wr.WriteBulk(args[1])
	default:
		c.writeErr(errWrongArity("ping"))
	}
}

func cmdEcho(c *request, args [][]byte) { c.wr.WriteBulk(args[1]) }

func cmdQuit(c *request, _ [][]byte) {
	c.wr.WriteString("OK")
	c.conn.quit = true
}

// cmdAuth: AUTH password | AUTH username password.
func (s *Server) cmdAuth(c *request, args [][]byte) {
	if len(args) > 3 {
		c.writeErr(errSyntax)
		return
	}
	name := "default"
	if len(args) == 3 {
		name = string(args[1])
	}
	u, err := s.authenticate(name, args[len(args)-1])
	if err != nil {
		if err == errWrongPass {
			s.authFailed(c, name)
		}
		c.writeErr(err)
		return
	}
	c.conn.setUser(u)
	c.wr.WriteString("OK")
}

// cmdHello: HELLO [2|3 [AUTH user pass] [SETNAME name]] chooses RESP2 or
// RESP3 for the connection and describes the server.
func (s *Server) cmdHello(c *request, args [][]byte) {
	proto := c.proto
	if len(args) >= 2 {
		ver, err := strconv.Atoi(string(args[1]))
		switch {
		case err != nil:
			c.writeErr(respError("ERR Protocol version is not an integer or out of range"))
			return
		case ver != 2 && ver != 3:
			c.writeErr(respError("NOPROTO unsupported protocol version"))
			return
		}
		proto = ver
	}
	var name []byte
	setName := false
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "auth") && i+2 < len(args):
			u, err := s.authenticate(string(args[i+1]), args[i+2])
			if err != nil {
				if err == errWrongPass {
					s.authFailed(c, string(args[i+1]))
				}
				c.writeErr(err)
				return
			}
			c.conn.setUser(u)
			i += 2
		case equalFold(args[i], "setname") && i+1 < len(args):
			name, setName = args[i+1], true
			i++
		default:
			c.writeErr(respError(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", truncate(args[i], 64))))
			return
		}
	}
	if !c.conn.authed {
		c.writeErr(respError("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"))
		return
	}
	if setName {
		if err := validClientName(name); err != nil {
			c.writeErr(err)
			return
		}
		c.conn.name = string(name)
	}
	c.conn.proto = proto
	c.session = c.conn.session // the reply is in the new protocol
	c.writeMapHeader(7)
	c.wr.WriteBulkString("server")
	c.wr.WriteBulkString("redis")
	c.wr.WriteBulkString("version")
	c.wr.WriteBulkString(version)
	c.wr.WriteBulkString("proto")
	c.wr.WriteInt(proto)
	c.wr.WriteBulkString("id")
	c.wr.WriteInt64(c.conn.id)
	c.wr.WriteBulkString("mode")
	c.wr.WriteBulkString("standalone")
	c.wr.WriteBulkString("role")
	c.wr.WriteBulkString("master")
	c.wr.WriteBulkString("modules")
	c.wr.WriteArray(0)
}

func validClientName(name []byte) error {
	for _, b := range name {
		if b < '!' || b > '~' {
			return respError("ERR Client names cannot contain spaces, newlines or special characters.")
		}
	}
	return nil
}

// cmdClient: CLIENT SETNAME | GETNAME | ID | SETINFO | INFO.
func (s *Server) cmdClient(c *request, args [][]byte) {
	sub := args[1]
	switch {
	case isHelp(args):
		c.writeHelp("CLIENT")
	case equalFold(sub, "setname") && len(args) == 3:
		if err := validClientName(args[2]); err != nil {
			c.writeErr(err)
			return
		}
		c.conn.name = string(args[2])
		c.wr.WriteString("OK")
	case equalFold(sub, "getname") && len(args) == 2:
		if c.name == "" {
			c.writeNull()
			return
		}
		c.wr.WriteBulkString(c.name)
	case equalFold(sub, "id") && len(args) == 2:
		c.wr.WriteInt64(c.conn.id)
	case equalFold(sub, "setinfo") && len(args) == 4:
		switch {
		case equalFold(args[2], "lib-name"):
			c.conn.libName = string(args[3])
		case equalFold(args[2], "lib-ver"):
			c.conn.libVer = string(args[3])
		default:
			c.writeErr(respError(fmt.Sprintf("ERR Unrecognized option '%s'", truncate(args[2], 64))))
			return
		}
		c.wr.WriteString("OK")
	case equalFold(sub, "info") && len(args) == 2:
		c.wr.WriteBulkString(c.conn.info())
	default:
		c.writeErr(unknownSubcommand(sub, "CLIENT"))
	}
}

// info is the CLIENT INFO / CLIENT LIST line for c.
func (c *client) info() string {
	last := ""
	if cmd := c.lastCmd.Load(); cmd != nil {
		last = cmd.name
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s name=%s age=%d db=%d cmd=%s resp=%d lib-name=%s lib-ver=%s\n",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), c.name, int(time.Since(c.created).Seconds()), c.db, last, c.proto, c.libName, c.libVer)
}

func cmdCluster(c *request, _ [][]byte) { c.writeErr(errClusterOff) }

// cmdWait: there are no replicas to wait for.
func cmdWait(c *request, args [][]byte) {
	if _, err := strconv.ParseInt(string(args[1]), 10, 64); err != nil {
		c.writeErr(errNotInteger)
		return
	}
	if _, err := strconv.ParseInt(string(args[2]), 10, 64); err != nil {
		c.writeErr(errNotInteger)
		return
	}
	c.wr.WriteInt(0)
}

// cmdCommand: COMMAND, COMMAND COUNT, COMMAND INFO name..., COMMAND DOCS.
func (s *Server) cmdCommand(c *request, args [][]byte) {
	switch {
	case len(args) == 1:
		c.wr.WriteArray(len(s.cmds))
		for _, name := range s.commandNames() {
			writeCommandInfo(c, s.cmds[name])
		}
	case isHelp(args):
		c.writeHelp("COMMAND")
	case equalFold(args[1], "count"):
		c.wr.WriteInt(len(s.cmds))
	case equalFold(args[1], "info"):
		c.wr.WriteArray(len(args) - 2)
		for _, name := range args[2:] {
			if cmd := s.lookup(name); cmd != nil {
				writeCommandInfo(c, cmd)
			} else {
				c.writeNull()
			}
		}
	case equalFold(args[1], "docs"):
		// The proxy's own commands; Redis's are Redis's to document
		// (redis-cli works without hints for them).
		names := args[2:]
		if len(names) == 0 {
			for _, d := range nativeDocs {
				names = append(names, []byte(d.name))
			}
		}
		var found []commandDoc
		for _, name := range names {
			if cmd := s.lookup(name); cmd != nil {
				if d, ok := docOf(cmd.name); ok {
					found = append(found, d)
				}
			}
		}
		c.writeMapHeader(len(found))
		for _, d := range found {
			c.wr.WriteBulkString(d.name)
			c.writeMapHeader(3)
			c.wr.WriteBulkString("summary")
			c.wr.WriteBulkString(d.summary)
			c.wr.WriteBulkString("since")
			c.wr.WriteBulkString("1.0.0")
			c.wr.WriteBulkString("group")
			c.wr.WriteBulkString("generic")
		}
	default:
		c.writeErr(unknownSubcommand(args[1], "COMMAND"))
	}
}

// writeCommandInfo writes the 10-field Redis 7 command entry.
func writeCommandInfo(c *request, cmd *command) {
	c.wr.WriteArray(10)
	c.wr.WriteBulkString(cmd.name)
	c.wr.WriteInt(cmd.arity)
	var flags []string
	switch {
	case cmd.flags&flagLock != 0:
		flags = []string{"write"}
	case cmd.flags&flagRead != 0:
		flags = []string{"readonly"}
	default:
		flags = []string{"fast"}
	}
	if cmd.flags&flagNoAuth != 0 {
		flags = append(flags, "no_auth")
	}
	c.wr.WriteArray(len(flags))
	for _, f := range flags {
		c.wr.WriteString(f)
	}
	first, last := cmd.keys.first, cmd.keys.last
	c.wr.WriteInt(first)
	c.wr.WriteInt(last)
	c.wr.WriteInt(min(first, 1))
	for range 4 { // ACL categories, tips, key specs, subcommands
		c.wr.WriteArray(0)
	}
}
