package proxy

// Spring Integration's RedisLockRegistry: KEYS[1] the lock, ARGV[1] the
// client id (owner), ARGV[2] the TTL in ms, or with the pub/sub lock, the
// channel its waiters listen on. Its scripts return Lua booleans: true is
// 1, false a nil reply.
func (s *Server) springScript(c *request, sha string, kind scriptKind, keys, argv [][]byte) {
	if len(keys) < 1 || len(argv) < 1 || kind != scriptSpringRelease && len(argv) < 2 {
		c.writeErr(scriptArgs(sha, kind, "1 key; the owner (and the TTL in ms or the channel)"))
		return
	}
	key, owner := string(keys[0]), string(argv[0])
	switch kind {
	case scriptSpringRelease:
		s.release(c, key, owner, falseNil)
	case scriptSpringReleaseNotify:
		if !c.owns(argv[1]) || len(argv[1]) > maxChannelLen {
			c.writeErr(errChannelPerm)
			return
		}
		if s.release(c, key, owner, falseNil) {
			s.bus.Notify(string(argv[1]), key)
		}
	case scriptSpringObtain, scriptSpringRenew:
		ttl, err := parseMillis(argv[1], "pexpire")
		if err != nil {
			c.writeErr(err)
			return
		}
		if kind == scriptSpringObtain {
			s.obtain(c, key, owner, ttl, true)
			return
		}
		s.extend(c, key, owner, ttl, false, falseNil)
	}
}
