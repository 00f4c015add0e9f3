package proxy

import (
	"fmt"
	"strings"
)

// Reading a script call's operands where its spec (scriptbook.go) says they
// are, and saying where that is when a call is too short.

// places lists the positions a spec reads.
func (s *spec) places() []pos {
	return []pos{s.key, s.owner, s.ttl, s.token, s.channel, s.message, s.latch, s.latchTTL, s.queue, s.wait}
}

// operands reads a script call's operands from where s says they are, with
// one check of the KEYS and ARGV counts and one parse of each TTL.
func (s *spec) operands(sha string, keys, argv [][]byte) (operands, error) {
	if s.dbFirst {
		if len(argv) < 1 { // runScript mapped KEYS into ARGV[1]'s database
			return operands{}, errDBIndex
		}
		argv = argv[1:]
	}
	enough := !s.ownerPerKey || !s.keyPairs && len(argv) >= len(keys)+1 || s.keyPairs && len(keys)%2 == 0 && len(argv) >= len(keys)/2+1
	for _, p := range s.places() {
		if p.inKeys && p.i > len(keys) || !p.inKeys && p.i > len(argv) {
			enough = false
		}
	}
	if !enough {
		return operands{}, respError(fmt.Sprintf("ERR script %s (%s) needs %s", sha, s.kind, s.describe()))
	}
	at := func(p pos) string {
		switch {
		case p.i == 0:
			return ""
		case p.inKeys:
			return string(keys[p.i-1])
		}
		return string(argv[p.i-1])
	}
	// A channel or message taken from KEYS is published as the client named
	// it, not as its database's key (selectdb.go).
	o := operands{key: at(s.key), owner: at(s.owner), token: at(s.token), channel: clientName(s.channel, at(s.channel)),
		message: clientName(s.message, at(s.message)), latch: at(s.latch), absentReleased: s.absentReleased, rw: s.rw, keyPairs: s.keyPairs, keys: keys, argv: argv,
		queue: at(s.queue), permit: s.permit}
	var err error
	if s.ttl.i > 0 {
		if o.ttl, err = parseMillis(argv[s.ttl.i-1], s.ttlCmd); err != nil {
			return operands{}, err
		}
	}
	if s.latchTTL.i > 0 {
		if o.latchTTL, err = parseMillis(argv[s.latchTTL.i-1], "set"); err != nil {
			return operands{}, err
		}
	}
	if s.wait.i > 0 {
		if o.wait, err = parseMillis(argv[s.wait.i-1], "zadd"); err != nil {
			return operands{}, err
		}
	}
	return o, nil
}

// clientName is a KEYS operand as the client named it.
func clientName(p pos, v string) string {
	if p.inKeys {
		return clientKey(v)
	}
	return v
}

// describe says where s reads its operands, for the error a short call gets.
func (s *spec) describe() string {
	names := []string{"the lock key", "the owner", "the TTL in ms", "the token counter", "the channel", "the message", "the latch", "the latch TTL in ms",
		"the queue", "the wait in ms"}
	var parts []string
	for i, p := range s.places() {
		if p.i > 0 {
			parts = append(parts, p.String()+" "+names[i])
		}
	}
	if s.dbFirst {
		parts = append([]string{"ARGV[1] the database (0-15), the ARGV below counted after it"}, parts...)
	}
	if s.ownerPerKey {
		parts = append(parts, "an owner in ARGV for each key")
	}
	return strings.Join(parts, ", ")
}
