package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"fmt"
)

// Reading a script call's operands where its spec (proxy/scriptbook) says they
// are, and saying where that is when a call is too short.

// operandsOf reads a script call's operands from where s says they are, with
// one check of the KEYS and ARGV counts and one parse of each TTL.
func operandsOf(s *scriptbook.Spec, sha string, keys, argv [][]byte) (operands, error) {
	if s.DBFirst {
		if len(argv) < 1 { // runScript mapped KEYS into ARGV[1]'s database
			return operands{}, errDBIndex
		}
		argv = argv[1:]
	}
	enough := !s.OwnerPerKey || !s.KeyPairs && len(argv) >= len(keys)+1 || s.KeyPairs && len(keys)%2 == 0 && len(argv) >= len(keys)/2+1
	for _, p := range s.Places() {
		if p.InKeys && p.N > len(keys) || !p.InKeys && p.N > len(argv) {
			enough = false
		}
	}
	if !enough {
		return operands{}, respError(fmt.Sprintf("ERR script %s (%s) needs %s", sha, s.Kind, s.Describe()))
	}
	at := func(p scriptbook.Pos) string {
		switch {
		case p.N == 0:
			return ""
		case p.InKeys:
			return string(keys[p.N-1])
		}
		return string(argv[p.N-1])
	}
	// A channel or message taken from KEYS is published as the client named
	// it, not as its database's key (selectdb.go).
	o := operands{key: at(s.Key), owner: at(s.Owner), token: at(s.Token), channel: clientName(s.Channel, at(s.Channel)),
		message: clientName(s.Message, at(s.Message)), latch: at(s.Latch), absentReleased: s.AbsentReleased, rw: s.RW, keyPairs: s.KeyPairs, keys: keys, argv: argv,
		queue: at(s.Queue), permit: s.Permit}
	var err error
	if s.TTL.N > 0 {
		if o.ttl, err = parseMillis(argv[s.TTL.N-1], s.TTLCmd); err != nil {
			return operands{}, err
		}
	}
	if s.LatchTTL.N > 0 {
		if o.latchTTL, err = parseMillis(argv[s.LatchTTL.N-1], "set"); err != nil {
			return operands{}, err
		}
	}
	if s.Wait.N > 0 {
		if o.wait, err = parseMillis(argv[s.Wait.N-1], "zadd"); err != nil {
			return operands{}, err
		}
	}
	return o, nil
}

// clientName is a KEYS operand as the client named it.
func clientName(p scriptbook.Pos, v string) string {
	if p.InKeys {
		return clientKey(v)
	}
	return v
}
