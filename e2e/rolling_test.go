package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// A rolling upgrade of two replicas behind a load balancer under live
// session-lock holders (issue 28): each replica in turn is stopped with
// SIGTERM and started again. A graceful shutdown leaves its session locks
// to their TTL; each holder, seeing its connection closed, reconnects to
// the replica that is up and sends its LOCK.ACQUIRE ... SESSION again,
// which re-attaches the lock and answers the same token. A contender asking
// for every lock through both replicas all along never gets one, and each
// shutdown's last log line counts the session locks it left.
func TestRollingUpgradeKeepsSessionLocks(t *testing.T) {
	sleepBound(t)
	const ttl = 3 * time.Second
	backends := redistest.Start(t, 3)
	addrs := [2]string{freeLoopbackAddr(t), freeLoopbackAddr(t)}
	start := func(i int) *proxyProcess {
		p := startProcess(t, os.Args[0], []string{childEnv + "=1"}, "-listen", addrs[i],
			"-backends", strings.Join(redistest.Addrs(backends), ","), "-quarantine=false",
			"-node-timeout", "2s", "-timeout-factor", "0.5", "-session-tick", "250ms", "-native-lock-delay", "0s")
		p.logged(t, listening)
		return p
	}
	replicas := [2]*proxyProcess{start(0), start(1)}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var violations atomic.Int64
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		violations.Add(1)
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}

	// The holders: two start on each replica.
	type holder struct {
		key, owner string
		token      int64
		reattached atomic.Int64
		at         atomic.Int64 // the replica its connection is to
		held       chan struct{}
	}
	holders := make([]*holder, 4)
	var wg sync.WaitGroup
	for i := range holders {
		h := &holder{key: fmt.Sprint("roll:", i), owner: fmt.Sprint("holder-", i), held: make(chan struct{})}
		holders[i] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *redis.Client
			defer func() {
				if c != nil {
					_ = c.Close()
				}
			}()
			grantedAt := time.Time{}
			var dials atomic.Int64 // of the current client: a second one is a new connection
			for try := i; ctx.Err() == nil; try++ {
				if c == nil {
					// The load balancer: the next replica in turn.
					dials.Store(0)
					c = redis.NewClient(&redis.Options{Addr: addrs[try%2], PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second,
						OnConnect: func(context.Context, *redis.Conn) error { dials.Add(1); return nil }})
					tok, err := c.Do(ctx, "LOCK.ACQUIRE", h.key, h.owner, ttl.Milliseconds(), "SESSION").Int64()
					switch {
					case ctx.Err() != nil:
						return
					case errors.Is(err, redis.Nil):
						problem("%s: LOCK.ACQUIRE SESSION by its holder through %s answered nil (not re-attached)", h.key, addrs[try%2])
						return
					case err != nil:
						_ = c.Close()
						c = nil
						if !grantedAt.IsZero() && time.Since(grantedAt) > ttl {
							problem("%s: no replica re-attached it within its TTL: %v", h.key, err)
							return
						}
						time.Sleep(50 * time.Millisecond)
						continue
					case h.token == 0:
						h.token = tok
						close(h.held)
					case tok != h.token:
						problem("%s: re-attached with token %d; its grant had %d", h.key, tok, h.token)
					default:
						h.reattached.Add(1)
					}
					grantedAt = time.Now()
					h.at.Store(int64(try % 2))
				}
				// go-redis replaces a connection its peer closed before using it,
				// silently: a PING that went out on a new connection means the
				// session's connection is gone, as an error does.
				if err := c.Ping(ctx).Err(); err != nil && ctx.Err() == nil || dials.Load() > 1 {
					_ = c.Close()
					c = nil                // its replica closed the connection: reconnect and re-attach
					try = int(h.at.Load()) // through the other replica first (try++)
					continue
				}
				grantedAt = time.Now() // the connection lives: its replica renews the lock
				try--                  // the same replica on the next turn
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	for _, h := range holders {
		select {
		case <-h.held:
		case <-time.After(waitLong):
			t.Fatalf("%s was never granted: %v", h.key, problems)
		}
	}

	// The contender, through both replicas, for every lock.
	var asked atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		cs := [2]*redis.Client{}
		for i, a := range addrs {
			cs[i] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, ReadTimeout: 10 * time.Second})
			defer cs[i].Close()
		}
		for ctx.Err() == nil {
			for _, c := range cs {
				for _, h := range holders {
					if tok, err := c.Do(ctx, "LOCK.ACQUIRE", h.key, "contender", 1000).Int64(); err == nil {
						problem("%s: the contender was granted token %d while its holder held it", h.key, tok)
					}
					if ok, err := c.SetNX(ctx, h.key, "contender", time.Second).Result(); err == nil && ok {
						problem("%s: the contender's SET NX was granted while its holder held it", h.key)
					}
					asked.Add(1)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	lastLine := regexp.MustCompile(`msg="shut down" rounds_finished=(\d+) rounds_cut_off=(\d+) session_locks_left_to_expire=(\d+)\s*$`)
	for i := range 2 { // A leaves the locks it holds; then B those it holds since
		time.Sleep(ttl + time.Second) // renewed past their TTL where they are
		want := 0                     // a holder moves only when its replica closes its connection
		for _, h := range holders {
			if h.at.Load() == int64(i) {
				want++
			}
		}
		if err := replicas[i].cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := replicas[i].exitCode(t); code != 0 {
			t.Fatalf("replica %d exited %d:\n%s", i, code, replicas[i].stderr)
		}
		switch m := lastLine.FindStringSubmatch(replicas[i].stderr.String()); {
		case m == nil:
			t.Errorf("replica %d's log does not end with the shutdown count:\n%s", i, replicas[i].stderr)
		case m[3] != fmt.Sprint(want):
			t.Errorf("replica %d left %s session locks to expire; want %d", i, m[3], want)
		default:
			t.Logf("replica %d: rounds finished %s, cut off %s, session locks left %s", i, m[1], m[2], m[3])
		}
		replicas[i] = start(i)
	}
	time.Sleep(ttl + time.Second) // the last moves are renewed past their TTL too
	stop()
	wg.Wait()
	if violations.Load() > 0 {
		t.Fatalf("%d violations:\n%s", violations.Load(), strings.Join(problems, "\n"))
	}
	if asked.Load() < 100 {
		t.Fatalf("the contender asked only %d times", asked.Load())
	}
	c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1})
	defer c.Close()
	moves := int64(0)
	for _, h := range holders {
		moves += h.reattached.Load()
		if h.reattached.Load() == 0 {
			t.Errorf("%s was never re-attached", h.key)
		}
	}
	// The holders hung up: their locks are released, not left.
	for _, h := range holders {
		deadline := time.Now().Add(waitLong)
		for {
			n, err := c.Exists(context.Background(), h.key).Result()
			if err == nil && n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still held %v after its holder hung up", h.key, waitLong)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("%d re-attaches, %d contender requests, no violation", moves, asked.Load())
}

// freeLoopbackAddr is a free port on 127.0.0.1, as host:port.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
