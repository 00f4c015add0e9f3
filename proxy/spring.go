package proxy

// Spring Integration's RedisLockRegistry: KEYS[1] the lock, ARGV[1] the
// client id (owner), ARGV[2] the TTL in ms, or with the pub/sub lock, the
// channel its waiters listen on (ARGV[2]; KEYS[2] in 6.4.8-6.5.x; ARGV[1]
// in 5.5.7-6.1.2, whose unlock deletes without comparing, after a GET).
// Its scripts return Lua booleans: true is 1, false a nil reply.
func (s *Server) springScript(c *request, sha string, kind scriptKind, keys, argv [][]byte) {
	if !springArgsOK(kind, keys, argv) {
		c.writeErr(scriptArgs(sha, kind, "the lock key (and the channel key); the owner (and the TTL in ms or the channel)"))
		return
	}
	key := string(keys[0])
	switch kind {
	case scriptSpringRelease:
		s.release(c, key, string(argv[0]), falseNil)
	case scriptSpringReleaseNotify, scriptSpringReleaseNotifyKey:
		var channel []byte
		if kind == scriptSpringReleaseNotifyKey {
			channel = keys[1]
		} else {
			channel = argv[1]
		}
		if !c.owns(channel) || len(channel) > maxChannelLen {
			c.writeErr(errChannelPerm)
			return
		}
		if s.release(c, key, string(argv[0]), falseNil) {
			s.bus.Notify(string(channel), key)
		}
	case scriptSpringDeleteNotify:
		s.springDelete(c, key, argv[0])
	case scriptSpringObtain, scriptSpringRenew:
		ttl, err := parseMillis(argv[1], "pexpire")
		if err != nil {
			c.writeErr(err)
			return
		}
		if kind == scriptSpringObtain {
			s.obtain(c, key, string(argv[0]), ttl, true)
			return
		}
		s.extend(c, key, string(argv[0]), ttl, false, falseNil)
	}
}

func springArgsOK(kind scriptKind, keys, argv [][]byte) bool {
	switch kind {
	case scriptSpringRelease, scriptSpringDeleteNotify:
		return len(keys) >= 1 && len(argv) >= 1
	case scriptSpringReleaseNotifyKey:
		return len(keys) >= 2 && len(argv) >= 1
	}
	return len(keys) >= 1 && len(argv) >= 2
}

// springDelete is the 5.5.7-6.1.2 pub/sub unlock: the client read the lock
// with GET first and found its own id, then deletes it unconditionally, as
// DEL does (a force release, refused with allow_force_release: false), and
// tells the waiters on channel.
func (s *Server) springDelete(c *request, key string, channel []byte) {
	if !c.owns(channel) || len(channel) > maxChannelLen {
		c.writeErr(errChannelPerm)
		return
	}
	existed, ok := s.forceRelease(c, "Spring's unlock (5.5.7-6.1.2)", key, string(channel), key)
	switch {
	case !ok:
	case existed:
		c.wr.WriteInt(1)
	default:
		c.writeNull()
	}
}
