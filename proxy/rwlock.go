package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// rwRelease gives up one hold of a read-write lock, answering as Redisson's
// unlock on one Redis: 1 when the lock is then free (for a write unlock,
// also when the writer's thread still reads it), 0 while it is held; the
// waiters are told only when it is free, as the script publishes.
func (s *scriptService) rwRelease(c *request, o operands) {
	start := time.Now()
	res, err := s.engine.ReleaseRW(c.ctx, o.key, o.owner, o.rw == "write", o.ttl, o.latch, o.latchTTL, o.absentReleased)
	s.metrics.observe(kindRelease, start, err, 0)
	switch {
	case err == nil && res == quorum.Released:
		s.bus.Notify(o.channel, o.message)
		c.wr.WriteInt(1)
	case err == nil && res == quorum.ReleasedShared && o.rw == "write":
		c.wr.WriteInt(1)
	case err == nil:
		c.wr.WriteInt(0)
	case errors.Is(err, quorum.ErrNotHeld):
		c.writeNull()
	default:
		c.writeErr(err)
	}
}

// readLocked answers Redisson 3.52's readLock().isLocked() by quorum.
func (s *scriptService) readLocked(c *request, o operands) {
	start := time.Now()
	yes, err := s.engine.ReadLocked(c.ctx, o.key)
	s.metrics.observe(kindRead, start, err, 0)
	if err != nil {
		c.writeErr(err)
		return
	}
	c.wr.WriteInt(boolInt(yes))
}

// unusedKeys reports, for an EVAL or EVALSHA of a known script, which KEYS
// positions (1-based) the proxy never touches for it (spec.unused).
func unusedKeys(cmd *command, args [][]byte) func(int) bool {
	none := func(int) bool { return false }
	if len(args) < 2 || cmd.name != "eval" && cmd.name != "evalsha" {
		return none
	}
	sha := strings.ToLower(string(args[1]))
	if cmd.name == "eval" {
		sha = scriptbook.SHA1Hex(string(args[1]))
	}
	sp := scriptbook.Book[sha]
	if sp == nil || len(sp.Unused) == 0 && !sp.KeyPairs {
		return none
	}
	return func(i int) bool { return slices.Contains(sp.Unused, i) || sp.KeyPairs && i%2 == 0 }
}
