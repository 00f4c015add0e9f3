package proxy

// The connection family's commands that change the connection's own
// state: SELECT (its lock database, selectdb.go) and RESET.

// cmdSelect: SELECT db, 0-15.
func cmdSelect(c *request, args [][]byte) {
	db, err := parseDB(args[1])
	if err != nil {
		c.writeErr(err)
		return
	}
	c.conn.db = db
	c.session = c.conn.session
	c.wr.WriteString("OK")
}

// cmdReset: RESET, as Redis answers it: the connection leaves every
// subscription, goes back to RESP2 and database 0, and is signed out (it
// must AUTH again when the proxy needs a password; its pre-AUTH allowance
// is not renewed). Its name and its session locks stay: the connection is
// the same one.
func (s *Server) cmdReset(c *request, _ [][]byte) {
	conn := c.conn
	s.hooks.connReset(conn)
	conn.proto, conn.db = 2, 0
	if s.opts.authRequired() {
		conn.authed, conn.user = false, nil
	}
	c.session = conn.session // the reply is in RESP2
	c.wr.WriteString("RESET")
}
