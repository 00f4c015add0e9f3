package e2e

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
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
	tokenReply               // GET redisson_lock_token:...: a fencing counter, compared by order (see tokenOrder)
	waitReply                // how long a refused waiter waits at most before it tries again, in ms: any positive count
	retryAtReply             // RPermitExpirableSemaphore's acquire: "OK", nil, or ":<when to try again>" (any time)
)

// ttlScripts answer a holder's remaining TTL (facts from the clients' source,
// see CLIENTS.md): Redisson's RLock acquire 3.19+, 3.12.3-3.18, 3.10.0-3.12.2,
// RFencedLock lock() and tryLock, bsm/redislock's pttl (v0.9 and v0.10), and
// RReadWriteLock's read and write acquires.
var ttlScripts = map[string]replyRule{
	"149c5a8bf18676fd99e9e6e24923bd64d9b62f94": ttlReply,
	"dad0f8d619e548e04f21fb48d50be5034df3adae": ttlReply,
	"9401052d872adfd0179ef8c8e8c028512707629a": ttlReply,
	"46b5551ba403d6152a7a6eca122e08728d6c8c66": ttlReply,
	"49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45": ttlFirstReply,
	"6484da7d58920897fdc22b7f9afd1a3d47524ea8": ttlReply,
	"66e1084c2d842a7e8c271925aae90219fac4e129": ttlReply,
	"95553a6ff11176c18e71344e89d116b06fd6f753": ttlReply,
	"6306ba3bf1f563b284bed52d305fce615c6664d9": ttlReply,
	// RFairLock's lock() (3.23, 3.52; 929defe0: 3.32-3.44) tells a refused waiter how long to
	// wait: one Redis from its waiters' timeouts (the holder's TTL, or the
	// place ahead's timeout, which includes the thread wait time), the
	// proxy from the holder's TTL or the lease of the place ahead.
	"762bfafa6be221431a0b668685dd15c926483619": waitReply,
	"8f6ed299ffd259f0539c20f89253998c0777ea75": waitReply,
	"929defe0321e0a4c943b4244951d3a730b6eaabc": waitReply,
	// RPermitExpirableSemaphore's acquire (3.23, 3.52) tells a refused one
	// when to try again: one Redis when the first permit held lapses by the
	// client's clock, the proxy when it lapses on a backend that refused.
	// Its getLeaseTime (3.52) answers a permit's lease left.
	"992c96b09a3d8ea0b37f5dc12e5347a44d93909d": retryAtReply,
	"8be95cb5221cc7ee883cacb8859a8b32ef501a0e": ttlReply,
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
	case "GET":
		if len(args) > 1 && strings.HasPrefix(args[1], "redisson_lock_token:") {
			return tokenReply
		}
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
	inRun := map[int]bool{} // replies judged as a retry loop's, not one by one
	var tokens tokenOrder
	first, second := "proxy", "redis-server"
	if tr.Upstream == "redis" { // replayOnRedis: two plain redis-servers
		first, second = "one redis-server", "another"
	}
	if !tr.Racy {
		for _, run := range retryRuns(t, tr) {
			for _, i := range run {
				inRun[i] = true
			}
			line, n := run[0]+2, len(run)
			wait, final := recordedReply(t, tr, run[0]), recordedReply(t, tr, run[n-1])
			for name, got := range map[string][]resp.Value{first: viaProxy, second: viaRedis} {
				if a, ok := waitThenFinal(got, run, wait, final, tr.LeaseMS); !ok || a < n/2 {
					t.Errorf("line %d: a retry loop of %d attempts: %s answered %d waits then the final answer (ok=%v); the real client was given %d waits then %v",
						line, n, name, a, ok, n-1, final)
				}
			}
		}
	}
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
		if inRun[i] {
			continue
		}
		tokens.check(t, line, rule, viaProxy[i], viaRedis[i], recorded, tr.Racy)
		if rule != handshakeReply && !sameReply(viaProxy[i], viaRedis[i], rule, tr.LeaseMS) {
			t.Errorf("line %d, %q: %s answered %v, %s %v", line, what, first, viaProxy[i], second, viaRedis[i])
		}
		if !tr.Racy && !sameReply(viaProxy[i], recorded, rule, tr.LeaseMS) {
			t.Errorf("line %d, %q: %s answered %v, the real client was given %v", line, what, first, viaProxy[i], recorded)
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
	case waitReply:
		if a.Kind == ':' || b.Kind == ':' {
			return a.Kind == ':' && b.Kind == ':' && a.Int > 0 && b.Int > 0
		}
	case retryAtReply:
		if strings.HasPrefix(a.Str, ":") || strings.HasPrefix(b.Str, ":") {
			return a.Kind == '$' && b.Kind == '$' && strings.HasPrefix(a.Str, ":") && strings.HasPrefix(b.Str, ":")
		}
	case ttlReply, ttlSecReply:
		if a.Kind == ':' && b.Kind == ':' && a.Int > 0 && b.Int > 0 {
			lease := leaseMS
			if rule == ttlSecReply {
				lease = (leaseMS + 999) / 1000
			}
			return a.Int <= lease && b.Int <= lease
		}
	case tokenReply:
		if x, okA := fencingToken(a, rule); okA {
			y, okB := fencingToken(b, rule)
			return okB && (x > 0) == (y > 0)
		}
	case ttlFirstReply:
		if len(a.Elems) == 2 && len(b.Elems) == 2 {
			return sameReply(a.Elems[0], b.Elems[0], ttlReply, leaseMS) && sameReply(a, b, tokenReply, leaseMS)
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

// retryRuns finds the retry loops of a transcript that does not race: one
// connection sends the same request three or more times in a row, and the
// recorded answers are one answer (the lock is held) until the last, which
// differs (bsm's Obtain with a retry strategy polling for a lease to run
// out). Each run is the indexes of its reply events.
//
// At which attempt such a loop first gets the final answer is decided by the
// machine's timing, not by the server: the lease runs out at a wall-clock
// time, and every reply of the busy machine that comes late moves the
// replay's later attempts later (see replayOne). So a run is judged as a
// whole (see compareReplies): the waiting answer, then the final answer and
// nothing else, with the final answer on the last attempt and the lock held
// for at least half of the recorded waiting attempts, which no server that
// ignored the lease or refused it at its end can give.
func retryRuns(t *testing.T, tr *transcript.Transcript) [][]int {
	type step struct {
		send string
		recv int
	}
	steps := map[int][]step{}
	pending := map[int][]string{}
	subscribed := map[int]bool{}
	var order []int
	for i, e := range tr.Events {
		switch {
		case e.Send != "":
			if strings.Contains(strings.ToUpper(e.Send[:min(len(e.Send), 40)]), "SUBSCRIBE") {
				subscribed[e.Conn] = true
			}
			pending[e.Conn] = append(pending[e.Conn], e.Send)
		case e.Recv != "" && !subscribed[e.Conn] && len(pending[e.Conn]) > 0:
			if _, seen := steps[e.Conn]; !seen {
				order = append(order, e.Conn)
			}
			steps[e.Conn] = append(steps[e.Conn], step{pending[e.Conn][0], i})
			pending[e.Conn] = pending[e.Conn][1:]
		}
	}
	var runs [][]int
	for _, c := range order {
		st := steps[c]
		for j := 0; j < len(st); {
			k := j + 1
			for k < len(st) && st[k].send == st[j].send {
				k++
			}
			if k-j >= 3 {
				var run []int
				for _, s := range st[j:k] {
					run = append(run, s.recv)
				}
				wait, final := tr.Events[run[0]].Recv, tr.Events[run[len(run)-1]].Recv
				held := wait != final
				for _, i := range run[:len(run)-1] {
					held = held && tr.Events[i].Recv == wait
				}
				if held {
					runs = append(runs, run)
				}
			}
			j = k
		}
	}
	return runs
}

// recordedReply is the reply the real client was given at event i.
func recordedReply(t *testing.T, tr *transcript.Transcript, i int) resp.Value {
	v, err := resp.Read(bufio.NewReader(strings.NewReader(tr.Events[i].Recv)))
	if err != nil {
		t.Fatalf("line %d: %v", i+2, err)
	}
	return v
}

// waitThenFinal says how many of got's replies at run's events are wait
// before the rest are final, and whether they are that: some waits, then
// finals only, the last one final.
func waitThenFinal(got []resp.Value, run []int, wait, final resp.Value, leaseMS int64) (int, bool) {
	a := 0
	for a < len(run) && sameReply(got[run[a]], wait, exactReply, leaseMS) {
		a++
	}
	if a == len(run) {
		return a, false
	}
	for _, i := range run[a:] {
		if !sameReply(got[i], final, exactReply, leaseMS) {
			return a, false
		}
	}
	return a, true
}

// fencingToken is the fencing token in a reply under rule: the second
// element of Redisson's fenced tryLock {pttl, token} (-1 when refused), or
// a token counter read with GET (0 when there is none).
func fencingToken(v resp.Value, rule replyRule) (int64, bool) {
	if len(v.Elems) == 2 && v.Elems[1].Kind == ':' {
		return v.Elems[1].Int, true
	}
	if v.Null {
		return 0, true
	}
	if rule == tokenReply && len(v.Elems) == 0 && (v.Kind == '$' || v.Kind == '+') {
		n, err := strconv.ParseInt(v.Str, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// tokenOrder checks fencing tokens by their order rather than their value.
// One redis-server counts them 1, 2, 3; the proxy's tokens strictly increase
// across grants (README, Guarantees) but may skip values: a node that missed
// a grant (it answered late on the busy machine, the others made the quorum)
// counts a contender's refused attempt too, and the next grant takes the
// largest count of its quorum (quorum/fencing.go). So each token through
// either server must be at least the recorded one, equal to the previous
// token where the recorded one is, and above it where the recorded one rose.
type tokenOrder struct {
	recorded int64
	last     [2]int64 // via the proxy, via the redis-server
}

func (o *tokenOrder) check(t *testing.T, line int, rule replyRule, viaProxy, viaRedis, recorded resp.Value, racy bool) {
	t.Helper()
	if rule != tokenReply && rule != ttlFirstReply || racy {
		return
	}
	r, ok := fencingToken(recorded, tokenReply)
	if !ok || r <= 0 {
		return
	}
	for k, v := range []resp.Value{viaProxy, viaRedis} {
		x, ok := fencingToken(v, tokenReply)
		switch {
		case !ok || x < r:
			t.Errorf("line %d: fencing token %v, below the recorded %d", line, v, r)
		case r == o.recorded && x != o.last[k]:
			t.Errorf("line %d: fencing token %d, where the recording repeats the previous one (%d)", line, x, o.last[k])
		case r > o.recorded && x <= o.last[k]:
			t.Errorf("line %d: fencing token %d, not above the previous one (%d) where the recording's rose", line, x, o.last[k])
		}
		o.last[k] = x
	}
	o.recorded = r
}
