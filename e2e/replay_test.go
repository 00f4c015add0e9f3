package e2e

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/internal/resp"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// TestTranscripts replays every recorded client session in
// compat/transcripts (real Jedis, Redisson, redis-py, Node and Go clients and
// redis-cli, recorded with cmd/wirerec) twice, in the recorded order of
// answers and at the recorded pace: through two proxy replicas over five
// redis-servers, and against one plain redis-server. Every reply must be the
// same in both and, unless the session's threads race for a lock, the same
// as the real client was given; remaining TTLs match when both are within
// the session's longest lease (see sameReply).
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("compat/transcripts/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in compat/transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			t.Parallel()
			tr, err := transcript.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Upstream == "redis" {
				replayOnRedis(t, tr)
				return
			}
			h := harness.New(t, 5, func(c *config.Config) {
				if tr.Users {
					c.Users = labUsers
				}
			})
			proxies := []string{h.Addr}
			for len(proxies) < tr.Replicas {
				_, addr := h.Serve()
				proxies = append(proxies, addr)
			}
			plain := redistest.Start(t, 1)[0]
			if tr.Users {
				labACL(t, plain)
			}
			loadClientScripts(t, plain)
			got := replay(t, tr, proxies, []string{plain.Addr, plain.Addr})
			if t.Failed() {
				return
			}
			compareReplies(t, tr, got[0], got[1])
		})
	}
}

// labUsers are the users transcripts with Users log in as.
var labUsers = []config.User{
	{Name: "app", Password: "app-pass"},
	{Name: "billing", Password: "b-pass", Prefix: "billing:"},
}

// labACL gives a plain redis-server the same users: billing may use keys
// and channels that start with billing:, and the names Redisson derives
// from its locks' names, as the proxy's ownership rule says.
func labACL(t *testing.T, s *redistest.Server) {
	c := s.Client()
	for _, rule := range [][]any{
		{"acl", "setuser", "app", "on", ">app-pass", "~*", "&*", "+@all"},
		{"acl", "setuser", "billing", "on", ">b-pass", "~billing:*", "&billing:*", "+@all",
			"~redisson_lock__channel:{billing:*", "~redisson_unlock_latch:{billing:*", "~redisson_lock_token:{billing:*",
			"~redisson_lock__channel:billing:*", "~redisson_unlock_latch:billing:*", "~redisson_lock_token:billing:*",
			"&redisson_lock__channel:{billing:*", "&redisson_lock__channel:billing:*"},
	} {
		if err := c.Do(t.Context(), rule...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// noReply stands for a reply that never came.
var noReply = resp.Value{Kind: '-', Str: "NOREPLY nothing came back within 15s"}

// loadClientScripts caches every client script the recorded sessions carry
// in a plain redis-server: the proxy answers their EVALSHA on a fresh
// replica, as one Redis does once any client loaded them.
func loadClientScripts(t *testing.T, s *redistest.Server) {
	texts, err := recordedTexts()
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	for sha, text := range texts {
		if err := c.ScriptLoad(t.Context(), text).Err(); err != nil {
			t.Fatalf("%s: %v", sha, err)
		}
	}
}

// replayOnRedis replays a session recorded against one plain redis-server
// (Upstream "redis") against two fresh ones, whose script caches are empty
// as that one's was: both must give the replies the client was given. (The
// proxy knows every script by its SHA1, so it would answer the EVALSHA that
// was refused, and take the client's fallback for a second call.)
func replayOnRedis(t *testing.T, tr *transcript.Transcript) {
	servers := redistest.Start(t, 2)
	if tr.Users {
		labACL(t, servers[0])
		labACL(t, servers[1])
	}
	// Every recorded replica was that one server (two clients' connections
	// recorded apart): each is the same server here too.
	a, b := make([]string, max(tr.Replicas, 1)), make([]string, max(tr.Replicas, 1))
	for i := range a {
		a[i], b[i] = servers[0].Addr, servers[1].Addr
	}
	got := replay(t, tr, a, b)
	if !t.Failed() {
		compareReplies(t, tr, got[0], got[1])
	}
}

// replay sends the transcript's requests again to each target, each
// connection to target[its replica], and returns what came back per target,
// indexed like the events.
//
// Each target is replayed on its own clock, all at once: a lock's lease
// starts when the target sets it, which through a proxy is later than on one
// redis-server by the proxy's round, and on a busy machine by much more. On
// one shared clock a retry recorded 13 ms after a lease ran out (bsm's
// Obtain with retry, Redisson's tryLock around a lease) reached the plain
// server after expiry and the proxy's backends before it, so the two gave
// different answers for timing alone. On its own clock a target's requests
// keep their recorded distance from the replies they follow.
func replay(t *testing.T, tr *transcript.Transcript, targets ...[]string) [][]resp.Value {
	got := make([][]resp.Value, len(targets))
	var wg sync.WaitGroup
	for k, addrs := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[k] = replayOne(t, tr, addrs)
		}()
	}
	wg.Wait()
	return got
}

// replayOne sends the transcript's requests again to one target, each
// connection to addrs[its replica], and returns what came back, indexed like
// the events.
func replayOne(t *testing.T, tr *transcript.Transcript, addrs []string) []resp.Value {
	targets := [][]string{addrs}
	type request struct {
		raw string
		ms  int64 // when it was recorded
	}
	type conn struct {
		unsent     []request // recorded, not sent yet
		subscribed bool
		nets       []net.Conn // one per target
		rds        []*bufio.Reader
		dead       []bool // a read failed: nothing more is read from it
	}
	conns := map[int]*conn{}
	defer func() {
		for _, c := range conns {
			for _, nc := range c.nets {
				_ = nc.Close()
			}
		}
	}()
	got := make([][]resp.Value, len(targets))
	for i := range got {
		got[i] = make([]resp.Value, len(tr.Events))
	}
	start, first := time.Now(), tr.Events[0].MS
	send := func(c *conn) bool {
		req := c.unsent[0]
		c.unsent = c.unsent[1:]
		// When the replay runs late, the rest of it moves later with it,
		// so a wait for a lock to expire still waits as long.
		due := start.Add(time.Duration(req.ms-first) * time.Millisecond)
		if late := time.Since(due); late > 0 {
			start = start.Add(late)
		} else {
			time.Sleep(-late)
		}
		for _, nc := range c.nets {
			if _, err := nc.Write([]byte(req.raw)); err != nil {
				t.Errorf("write to %s: %v", nc.RemoteAddr(), err)
				return false
			}
		}
		return true
	}
	for i, e := range tr.Events {
		c := conns[e.Conn]
		if c == nil {
			c = &conn{dead: make([]bool, len(targets))}
			for _, addrs := range targets {
				nc, err := net.Dial("tcp", addrs[e.Replica])
				if err != nil {
					t.Errorf("line %d: %v", i+2, err)
					return got[0]
				}
				c.nets, c.rds = append(c.nets, nc), append(c.rds, bufio.NewReaderSize(nc, 1<<16))
			}
			conns[e.Conn] = c
		}
		switch {
		case e.Send != "":
			c.unsent = append(c.unsent, request{e.Send, e.MS})
			if strings.Contains(strings.ToUpper(e.Send[:min(len(e.Send), 40)]), "SUBSCRIBE") {
				c.subscribed = true
			}
			if c.subscribed && !send(c) {
				return got[0]
			}
		case e.Recv != "":
			if c.subscribed {
				// A message may be the work of a request still held back
				// on another connection: send them all first.
				for _, other := range conns {
					for len(other.unsent) > 0 {
						if !send(other) {
							return got[0]
						}
					}
				}
			}
			if len(c.unsent) > 0 && !send(c) {
				return got[0]
			}
			for k := range targets {
				if c.dead[k] {
					got[k][i] = noReply
					continue
				}
				_ = c.nets[k].SetReadDeadline(time.Now().Add(15 * time.Second))
				v, err := resp.Read(c.rds[k])
				if err != nil {
					// Nothing more comes on this connection; the comparison
					// says where the replies first went different.
					c.dead[k], got[k][i] = true, noReply
					continue
				}
				got[k][i] = v
			}
		case e.Close:
			for len(c.unsent) > 0 {
				if !send(c) {
					return got[0]
				}
			}
			for _, nc := range c.nets {
				_ = nc.Close()
			}
		}
	}
	return got[0]
}
