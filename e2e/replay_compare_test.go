package e2e

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/resp"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// replyRule is how a reply is compared.
type replyRule int

const (
	exactReply     replyRule = iota
	ttlReply                 // a remaining TTL in ms (ttlSecReply: in s)
	ttlSecReply              //
	ttlFirstReply            // an array whose first element is a TTL in ms: Redisson's fenced tryLock {pttl, token}
	handshakeReply           // HELLO, INFO, CLIENT ...: the server's own facts; same kind of reply only
	countReply               // PUBLISH: a count of listeners, which the proxy counts its own way
)

// ttlScripts answer a holder's remaining TTL (facts from the clients' source,
// see CLIENTS.md): Redisson's RLock acquire 3.19+, 3.12.3-3.18, 3.10.0-3.12.2,
// RFencedLock lock() and tryLock, and bsm/redislock's pttl.
var ttlScripts = map[string]replyRule{
	"149c5a8bf18676fd99e9e6e24923bd64d9b62f94": ttlReply,
	"dad0f8d619e548e04f21fb48d50be5034df3adae": ttlReply,
	"9401052d872adfd0179ef8c8e8c028512707629a": ttlReply,
	"46b5551ba403d6152a7a6eca122e08728d6c8c66": ttlReply,
	"49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45": ttlFirstReply,
	"6484da7d58920897fdc22b7f9afd1a3d47524ea8": ttlReply,
}

// ruleFor is the rule for replies to the command args.
func ruleFor(args []string) replyRule {
	if len(args) == 0 {
		return exactReply
	}
	switch strings.ToUpper(args[0]) {
	case "PTTL":
		return ttlReply
	case "TTL":
		return ttlSecReply
	case "HELLO", "INFO", "CLIENT", "COMMAND", "CONFIG":
		return handshakeReply
	case "PUBLISH":
		// Redis counts its subscribers; a proxy replica counts the replicas
		// listening (README, Lock wake-ups): an integer either way.
		return countReply
	case "EVAL":
		if len(args) > 1 {
			sum := sha1.Sum([]byte(args[1]))
			return ttlScripts[hex.EncodeToString(sum[:])]
		}
	case "EVALSHA":
		if len(args) > 1 {
			return ttlScripts[strings.ToLower(args[1])]
		}
	}
	return exactReply
}

// compareReplies checks each reply through the proxy against the plain
// redis-server's and against the recording.
func compareReplies(t *testing.T, tr *transcript.Transcript, viaProxy, viaRedis []resp.Value) {
	pending := map[int][][]string{} // commands sent and not yet answered, per connection
	subscribed := map[int]bool{}
	for i, e := range tr.Events {
		line := i + 2
		if e.Send != "" {
			cmd, err := resp.Read(bufio.NewReader(strings.NewReader(e.Send)))
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			args := cmd.Args()
			if len(args) > 0 && strings.Contains(strings.ToUpper(args[0]), "SUBSCRIBE") {
				subscribed[e.Conn] = true
			}
			pending[e.Conn] = append(pending[e.Conn], args)
			continue
		}
		if e.Recv == "" {
			continue
		}
		var args []string
		if !subscribed[e.Conn] && len(pending[e.Conn]) > 0 {
			args, pending[e.Conn] = pending[e.Conn][0], pending[e.Conn][1:]
		}
		rule := ruleFor(args)
		recorded, err := resp.Read(bufio.NewReader(strings.NewReader(e.Recv)))
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		what := strings.Join(args, " ")
		if len(what) > 80 {
			what = what[:80] + "..."
		}
		if rule != handshakeReply && !sameReply(viaProxy[i], viaRedis[i], rule, tr.LeaseMS) {
			t.Errorf("line %d, %q: proxy answered %v, redis-server %v", line, what, viaProxy[i], viaRedis[i])
		}
		if !tr.Racy && !sameReply(viaProxy[i], recorded, rule, tr.LeaseMS) {
			t.Errorf("line %d, %q: proxy answered %v, the real client was given %v", line, what, viaProxy[i], recorded)
		}
	}
}

// sameReply compares two replies under rule: errors by their code (the first
// word), TTLs by being within the lease, the rest exactly.
func sameReply(a, b resp.Value, rule replyRule, leaseMS int64) bool {
	if a.Kind == '-' || b.Kind == '-' {
		return a.Kind == b.Kind && errCode(a.Str) == errCode(b.Str)
	}
	switch rule {
	case handshakeReply:
		return a.Kind == b.Kind
	case countReply:
		return a.Kind == ':' && b.Kind == ':' && a.Int >= 0 && b.Int >= 0
	case ttlReply, ttlSecReply:
		if a.Kind == ':' && b.Kind == ':' && a.Int > 0 && b.Int > 0 {
			lease := leaseMS
			if rule == ttlSecReply {
				lease = (leaseMS + 999) / 1000
			}
			return a.Int <= lease && b.Int <= lease
		}
	case ttlFirstReply:
		if len(a.Elems) == 2 && len(b.Elems) == 2 {
			return sameReply(a.Elems[0], b.Elems[0], ttlReply, leaseMS) && sameReply(a.Elems[1], b.Elems[1], exactReply, leaseMS)
		}
	}
	if a.Kind != b.Kind || a.Null != b.Null || a.Str != b.Str || a.Int != b.Int || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Elems {
		if !sameReply(a.Elems[i], b.Elems[i], exactReply, leaseMS) {
			return false
		}
	}
	return true
}

func errCode(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	return code
}
