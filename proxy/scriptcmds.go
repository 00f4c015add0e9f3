package proxy

import (
	"strconv"
	"strings"

	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"
)

// scriptKeys are an EVAL's or EVALSHA's KEYS, by its numkeys.
func scriptKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	if n, err := strconv.Atoi(string(args[2])); err == nil && n >= 0 && n <= len(args)-3 {
		return args[3 : 3+n]
	}
	return nil
}

// cmdEval: EVAL script numkeys key... arg... runs a recognised lock script as
// a quorum round. The script itself never reaches a backend.
func (s *scriptService) cmdEval(c *request, args [][]byte) {
	sha, sp, ok := s.registry.Recognise(c.tenant(), string(args[1]))
	if refused := scriptbook.RefusedAcquires[sha]; refused != "" {
		c.writeErr(respError(refused)) // the acquire of a family not served whole (scriptbook/families.go)
		return
	}
	if !ok {
		c.writeErr(unknownScript(sha))
		return
	}
	s.runScript(c, sha, sp, args[2:])
}

// cmdEvalSHA runs a script this proxy has seen (or knows) by SHA1; any other
// SHA1 gets NOSCRIPT, on which every client falls back to EVAL.
func (s *scriptService) cmdEvalSHA(c *request, args [][]byte) {
	if refused := scriptbook.RefusedAcquires[strings.ToLower(string(args[1]))]; refused != "" {
		c.writeErr(respError(refused))
		return
	}
	sp, ok := s.registry.BySHA(c.tenant(), string(args[1]))
	if !ok {
		c.writeErr(errNoScript)
		return
	}
	s.runScript(c, string(args[1]), sp, args[2:])
}

// runScript reads the call's operands where the script's spec says they
// are, and runs its kind's meaning.
func (s *scriptService) runScript(c *request, sha string, sp *scriptbook.Spec, rest [][]byte) {
	keys, argv, err := splitScriptArgs(rest)
	if err != nil {
		c.writeErr(err)
		return
	}
	db := c.db
	if sp.DBFirst && len(argv) > 0 { // the script SELECTs ARGV[1] itself
		if db, err = parseDB(argv[0]); err != nil {
			c.writeErr(err)
			return
		}
	}
	o, err := operandsOf(sp, sha, mapScriptKeys(db, keys), argv)
	if err != nil {
		c.writeErr(err)
		return
	}
	if sp.Replies != nil {
		s.runRegistered(c, sp, o)
		return
	}
	meanings[sp.Kind](s, c, o)
}

// meanings runs each kind of script as lock operations, answering as the
// script would on one Redis.
var meanings = map[scriptbook.Kind]func(s *scriptService, c *request, o operands){
	scriptbook.Release:        func(s *scriptService, c *request, o operands) { s.native.release(c, o.key, o.owner, falseZero) },
	scriptbook.ReleaseMissing: func(s *scriptService, c *request, o operands) { s.native.release(c, o.key, o.owner, falseMissing) },
	scriptbook.Extend: func(s *scriptService, c *request, o operands) {
		s.native.extend(c, o.key, o.owner, o.ttl, false, falseZero)
	},
	scriptbook.ExtendPy: func(s *scriptService, c *request, o operands) {
		if len(o.argv) < 3 || string(o.argv[2]) == "0" { // redis-py's replace_ttl=False: add to the TTL
			s.native.extendBy(c, o.key, o.owner, o.ttl)
			return
		}
		s.native.extend(c, o.key, o.owner, o.ttl, false, falseZero)
	},
	scriptbook.ExtendOrAcquire: func(s *scriptService, c *request, o operands) {
		s.native.extend(c, o.key, o.owner, o.ttl, true, falseZero)
	},
	scriptbook.Obtain:           func(s *scriptService, c *request, o operands) { s.bsmObtain(c, o.keys[:1], o.owner, o.argv[1], o.ttl) },
	scriptbook.OwnerPTTL:        func(s *scriptService, c *request, o operands) { s.native.ownerPTTL(c, o.key, o.owner) },
	scriptbook.AcquireAll:       func(s *scriptService, c *request, o operands) { s.allKeys(c, multiAcquire, o.keys, o.owner, o.ttl) },
	scriptbook.ExtendAll:        func(s *scriptService, c *request, o operands) { s.allKeys(c, multiExtend, o.keys, o.owner, o.ttl) },
	scriptbook.ReleaseAll:       func(s *scriptService, c *request, o operands) { s.allKeys(c, multiRelease, o.keys, o.owner, 0) },
	scriptbook.HashAcquire:      func(s *scriptService, c *request, o operands) { s.hashAcquire(c, o, false) },
	scriptbook.FencedAcquire:    func(s *scriptService, c *request, o operands) { s.hashAcquire(c, o, false) },
	scriptbook.FencedTryAcquire: func(s *scriptService, c *request, o operands) { s.hashAcquire(c, o, true) },
	scriptbook.HashRelease: func(s *scriptService, c *request, o operands) {
		if o.rw != "" {
			s.rwRelease(c, o)
			return
		}
		s.hashRelease(c, o)
	},
	scriptbook.HashExtend: func(s *scriptService, c *request, o operands) {
		s.hashExtend(c, o.keys[:1], [][]byte{[]byte(o.owner)}, o.ttl, false)
	},
	scriptbook.HashExtendAll: func(s *scriptService, c *request, o operands) {
		keys := o.keys
		if o.keyPairs { // a lock and a name of its, for each owner
			keys = make([][]byte, 0, len(o.keys)/2)
			for i := 0; i < len(o.keys); i += 2 {
				keys = append(keys, o.keys[i])
			}
		}
		s.hashExtend(c, keys, o.argv[1:1+len(keys)], o.ttl, true)
	},
	scriptbook.ForceUnlock: func(s *scriptService, c *request, o operands) {
		if o.queue != "" {
			s.fairForceRelease(c, o)
			return
		}
		if existed, ok := s.native.forceRelease(c, "forceUnlock", o.key, o.channel, o.message, o.rw); ok {
			c.wr.WriteInt(boolInt(existed))
		}
	},
	// Spring Integration's RedisLockRegistry answers Lua booleans: true is
	// 1, false a nil reply.
	scriptbook.SpringObtain:           func(s *scriptService, c *request, o operands) { s.native.obtain(c, o.key, o.owner, o.ttl) },
	scriptbook.SpringRelease:          func(s *scriptService, c *request, o operands) { s.native.release(c, o.key, o.owner, falseNil) },
	scriptbook.SpringReleaseNotify:    springReleaseNotify,
	scriptbook.SpringReleaseNotifyKey: springReleaseNotify,
	scriptbook.SpringRenew: func(s *scriptService, c *request, o operands) {
		s.native.extend(c, o.key, o.owner, o.ttl, false, falseNil)
	},
	scriptbook.SpringDeleteNotify: springDeleteNotify,
	scriptbook.BsmObtain:          func(s *scriptService, c *request, o operands) { s.bsmObtain(c, o.keys, o.owner, o.argv[1], o.ttl) },
	scriptbook.BsmRefresh:         func(s *scriptService, c *request, o operands) { s.bsmRefresh(c, o.keys, o.owner, o.ttl) },
	scriptbook.BsmRelease:         func(s *scriptService, c *request, o operands) { s.bsmRelease(c, o.keys, o.owner) },
	scriptbook.BsmPTTL:            func(s *scriptService, c *request, o operands) { s.bsmPTTL(c, o.keys, o.owner) },
	scriptbook.HashLeaseAll:       hashLease,
	scriptbook.ReadLocked:         func(s *scriptService, c *request, o operands) { s.readLocked(c, o) },
	scriptbook.FairAcquire:        func(s *scriptService, c *request, o operands) { s.fairAcquire(c, o, true) },
	scriptbook.FairTryAcquire:     func(s *scriptService, c *request, o operands) { s.fairAcquire(c, o, false) },
	scriptbook.FairLeave:          func(s *scriptService, c *request, o operands) { s.fairLeave(c, o) },
	scriptbook.Permits:            func(s *scriptService, c *request, o operands) { s.permits(c, o) },
}

func springReleaseNotify(s *scriptService, c *request, o operands) {
	s.native.releaseNotify(c, o.key, o.owner, o.channel, o.message)
}

// springDeleteNotify is the 5.5.7-6.1.2 pub/sub unlock: the client read the
// lock with GET first and found its own id, then deletes it
// unconditionally, as DEL does (a force release, refused with
// allow_force_release: false), and tells the waiters on the channel.
func springDeleteNotify(s *scriptService, c *request, o operands) {
	if !c.mayNotify(o.channel) {
		return
	}
	existed, ok := s.native.forceRelease(c, "Spring's unlock (5.5.7-6.1.2)", o.key, o.channel, o.message, "")
	switch {
	case !ok:
	case existed:
		c.wr.WriteInt(1)
	default:
		c.writeNull()
	}
}

// cmdScript: SCRIPT LOAD | EXISTS | FLUSH.
func (s *scriptService) cmdScript(c *request, args [][]byte) {
	sub := args[1]
	switch {
	case isHelp(args):
		c.writeHelp("SCRIPT")
	case equalFold(sub, "load") && len(args) == 3:
		sha, _, ok := s.registry.Recognise(c.tenant(), string(args[2]))
		if !ok {
			c.writeErr(unknownScript(sha))
			return
		}
		c.wr.WriteBulkString(sha)
	case equalFold(sub, "exists") && len(args) >= 3:
		c.wr.WriteArray(len(args) - 2)
		for _, sha := range args[2:] {
			_, ok := s.registry.BySHA(c.tenant(), string(sha))
			c.wr.WriteInt(boolInt(ok))
		}
	case equalFold(sub, "flush") && len(args) <= 3:
		s.registry.Flush(c.tenant())
		c.wr.WriteString("OK")
	case equalFold(sub, "load"), equalFold(sub, "exists"), equalFold(sub, "flush"):
		c.writeErr(errWrongArity("script|" + string(sub)))
	default:
		c.writeErr(unknownSubcommand(sub, "SCRIPT"))
	}
}
