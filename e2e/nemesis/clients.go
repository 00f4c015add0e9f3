package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// The canonical compare-and-delete and compare-and-PEXPIRE scripts.
const (
	unlockScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	extendScript = "if redis.call('GET', KEYS[1]) == ARGV[1]\nthen\n  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\nelse\n  return 0\nend"
)

// scripts are Redisson's scripts as its recorded sessions sent them
// (compat/transcripts): RLock's lock and unlock (3.52) and watchdog (3.23),
// and RReadWriteLock's read and write lock and unlock (3.52) and the
// reader's renewal (3.23; the writer renews with RLock's).
type scripts struct {
	lock, unlock, renew                                     string
	rwRead, rwWrite, rwReadUnlock, rwWriteUnlock, rwRenewRd string
}

func loadScripts(root string) (scripts, error) {
	var s scripts
	for file, shas := range map[string]map[string]*string{
		"redisson-3.52.0-rlock.jsonl": {"149c5a8bf18676fd99e9e6e24923bd64d9b62f94": &s.lock, "6866459238a13a701d42f4971f12d9f3a50e2442": &s.unlock},
		"redisson-3.23.4.jsonl":       {"8e19a1ddbdee9138df9f32a480c57addab4353d1": &s.renew},
		"redisson-3.52.0-rwlock.jsonl": {"95553a6ff11176c18e71344e89d116b06fd6f753": &s.rwRead, "6306ba3bf1f563b284bed52d305fce615c6664d9": &s.rwWrite,
			"6e1b10e11ac0a3ed8e902562ecd32ce01b553039": &s.rwReadUnlock, "21f5fb0f8ddfa9be5c3e0c9757c128796add75c6": &s.rwWriteUnlock},
		"redisson-3.23.4-rwlock.jsonl": {"6563941ff57e01b8cf61e86907b80686438a2f74": &s.rwRenewRd},
	} {
		tr, err := transcript.Load(filepath.Join(root, "compat", "transcripts", file))
		if err != nil {
			return s, err
		}
		for sha, dst := range shas {
			var ok bool
			if *dst, ok = tr.Script(sha); !ok {
				return s, fmt.Errorf("%s has no EVAL of %s", file, sha)
			}
		}
	}
	return s, nil
}

// world is what every client shares.
type world struct {
	rec      *history.Recorder
	addrs    []string // the replicas
	keys     []string // string locks: plain and native clients
	hashKeys []string // Redisson's hash locks (a hash on a string lock's key is WRONGTYPE)
	rwKeys   []string // Redisson's read-write locks
	scripts  scripts
	delay    time.Duration // native locks' lock-delay (Op.Delay)
	libDelay time.Duration // SET NX PX and Redisson locks' lock-delay (Op.Delay)
	stop     chan struct{}
}

// client is one simulated application: its own connections to every
// replica and its own random stream.
type client struct {
	w    *world
	name string
	kind string
	rng  *rand.Rand
	cs   []*redis.Client
	seq  int
}

// The kinds of client.
const (
	Plain    = "plain"    // SET NX PX, compare-and-delete EVAL, compare-and-PEXPIRE EVAL, LOCK.TOKEN
	Redisson = "redisson" // Redisson's hash lock, unlock and renewal scripts
	Native   = "native"   // LOCK.ACQUIRE [WAIT] [SESSION], LOCK.EXTEND, LOCK.RELEASE, LOCK.TOKEN
	RWLock   = "rwlock"   // Redisson's RReadWriteLock: read or write lock, renewal and unlock scripts
)

var clientKinds = []string{Plain, Redisson, Native, RWLock}

func newClient(w *world, kind string, n int, seed uint64) *client {
	c := &client{w: w, name: fmt.Sprintf("%s%d", kind, n), kind: kind, rng: rand.New(rand.NewPCG(seed, uint64(n)))}
	for _, a := range w.addrs {
		c.cs = append(c.cs, redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, PoolSize: 4,
			DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}))
	}
	return c
}

func (c *client) close() {
	for _, r := range c.cs {
		_ = r.Close()
	}
}

func (c *client) stopped() bool {
	select {
	case <-c.w.stop:
		return true
	default:
		return false
	}
}

// run does lock cycles until the world stops.
func (c *client) run() {
	defer c.close()
	for !c.stopped() {
		c.seq++
		key := c.w.keys[c.rng.IntN(len(c.w.keys))]
		switch c.kind {
		case Redisson:
			key = c.w.hashKeys[c.rng.IntN(len(c.w.hashKeys))]
		case RWLock:
			key = c.w.rwKeys[c.rng.IntN(len(c.w.rwKeys))]
		}
		r := c.rng.IntN(len(c.cs))
		owner := fmt.Sprintf("%s-%d", c.name, c.seq)
		ttl := time.Duration(300+c.rng.IntN(2700)) * time.Millisecond
		switch c.kind {
		case Plain:
			c.plain(key, owner, r, ttl)
		case Redisson:
			c.redisson(key, owner, r, ttl)
		case Native:
			c.native(key, owner, r, ttl)
		case RWLock:
			c.rwlock(key, owner, r, ttl)
		}
		c.sleep(time.Duration(c.rng.IntN(50)) * time.Millisecond)
	}
}

func (c *client) sleep(d time.Duration) {
	select {
	case <-time.After(d):
	case <-c.w.stop:
	}
}

// record sends one op and records it with its outcome.
func (c *client) record(op history.Op, r int, send func(ctx context.Context) (history.Outcome, int64, error)) (history.Outcome, int64) {
	op.Client, op.Via = c.name, c.w.addrs[r]
	done := c.w.rec.Begin(op)
	out, tok, err := send(context.Background())
	if err != nil {
		out = history.Unknown
	}
	done(out, tok, err)
	return out, tok
}

// holdFor is how long a holder keeps a lock: sometimes past its TTL, so
// that expiry (and extends that come too late) are exercised too.
func (c *client) holdFor(ttl time.Duration) time.Duration {
	return time.Duration(c.rng.Float64() * 1.2 * float64(ttl))
}

// intReply maps a 1/0 reply to OK/NotHeld.
func intReply(n int64, err error) (history.Outcome, int64, error) {
	switch {
	case err != nil:
		return history.Unknown, 0, err
	case n == 1:
		return history.OK, 0, nil
	case n == 0:
		return history.NotHeld, 0, nil
	}
	return history.Unknown, 0, fmt.Errorf("unexpected reply %d", n)
}

// tokenReply maps LOCK.TOKEN/LOCK.ACQUIRE's reply: a token, or nil.
func tokenReply(refused history.Outcome) func(int64, error) (history.Outcome, int64, error) {
	return func(t int64, err error) (history.Outcome, int64, error) {
		switch {
		case errors.Is(err, redis.Nil):
			return refused, 0, nil
		case err != nil:
			return history.Unknown, 0, err
		case t <= 0:
			return history.Unknown, t, fmt.Errorf("token %d", t)
		}
		return history.OK, t, nil
	}
}

// tokenReads reads the lock's token at once through every replica (a plain
// lock gets its token at its first read: all readers must agree).
func (c *client) tokenReads(key, owner string) {
	var wg sync.WaitGroup
	for r := range c.cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.record(history.Op{Key: key, Kind: history.Token, Owner: owner}, r, func(ctx context.Context) (history.Outcome, int64, error) {
				return tokenReply(history.NotHeld)(c.cs[r].Do(ctx, "LOCK.TOKEN", key, owner).Int64())
			})
		}()
	}
	wg.Wait()
}
