package proxy

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// hashLease is RedissonMultiLock's lease (Redisson 3.52 sends it after
// taking its members when it was given a lease time, one member a call):
// RedissonExpirable's generic script, PEXPIRE of every KEY to ARGV[1] ms
// with the PEXPIRE option in ARGV[2] ("" from the lock), answering 1 when
// any was set. Each member's TTL is set by quorum (Engine.LeaseHash). The
// script names no owner: any client may send it, and a shorter TTL ends
// its holder's window early, a force release. So the lease shortens a lock
// only where force release is allowed (allow_force_release, as DEL); where
// it is not, it never shortens one: a member Redisson took for longer
// (twice its wait time) keeps that TTL and is released at unlock as ever.
// NX answers 0, as on one Redis for a lock (it has a TTL).
func hashLease(s *scriptService, c *request, o operands) {
	how := int64(quorum.LeaseSet)
	if !s.opts.AllowForceRelease {
		how = quorum.LeaseMax
	}
	if len(o.argv) > 1 {
		switch opt := strings.ToUpper(string(o.argv[1])); opt {
		case "", "XX":
		case "GT":
			how = quorum.LeaseMax
		case "LT":
			if !s.opts.AllowForceRelease {
				c.writeErr(errForceRelease("a lease that only shortens (PEXPIRE ... LT)"))
				return
			}
			how = quorum.LeaseMin
		case "NX":
			c.wr.WriteInt(0)
			return
		default:
			c.writeErr(respError("ERR Unsupported option " + string(o.argv[1])))
			return
		}
	}
	set := make([]bool, len(o.keys))
	errs := make([]error, len(o.keys))
	var wg sync.WaitGroup
	for i, key := range o.keys {
		wg.Go(func() {
			start := time.Now()
			g, err := s.engine.LeaseHash(c.ctx, string(key), o.ttl, how)
			c.track(kindExtend, start, g, err)
			set[i], errs[i] = err == nil, err
		})
	}
	wg.Wait()
	any := false
	for i, err := range errs {
		if err != nil && !errors.Is(err, quorum.ErrNotHeld) {
			c.writeErr(err)
			return
		}
		any = any || set[i]
	}
	c.wr.WriteInt(boolInt(any))
}
