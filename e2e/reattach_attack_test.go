package e2e

// Findings of helper-65 and helper-66, adversarial reviews of 8fc6d5d
// (re-attaches ordered) and 0abb9d4: each test failed on the commit its
// reviewer attacked.

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// TestSessionAcquireOfABoundLockAnswersNil: a connection-bound lock
// (SET k v NX, no TTL) is not re-attachable (reattach.lua refuses a note
// whose round ends with "~"). A LOCK.ACQUIRE k v ttl SESSION from another
// connection used to answer nil (the lock is taken), and with WAIT it
// waited for the lock. Since 8fc6d5d the re-attach loop keeps reading and
// answers NOQUORUM ("ask again") after four tries: asking again never
// changes anything, and a WAIT ends at once with that error.
func TestSessionAcquireOfABoundLockAnswersNil(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = 250 * time.Millisecond })
	ctx := t.Context()
	holder := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	harness.Eventually(t, "bound lock", func() bool {
		return holder.Do(ctx, "SET", "attack:bound", "v", "NX").Err() == nil
	})
	other := h.Client(func(o *redis.Options) { o.PoolSize = 1 })
	_, err := other.Do(ctx, "LOCK.ACQUIRE", "attack:bound", "v", 3000, "SESSION").Int64()
	if !errors.Is(err, redis.Nil) {
		t.Errorf("LOCK.ACQUIRE ... SESSION of a connection-bound lock held by the same value = %v; want nil (taken)", err)
	}
	// With WAIT: the holder releases after 500 ms; the waiter should get it.
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = holder.Close()
	}()
	tok, err := other.Do(ctx, "LOCK.ACQUIRE", "attack:bound", "v", 3000, "SESSION", "WAIT", 5000).Int64()
	if err != nil {
		t.Errorf("LOCK.ACQUIRE ... SESSION WAIT 5000 while a bound lock of the same value is held for 500 ms = %d, %v; want a token", tok, err)
	}
}

// reattachHold holds, once armed, the re-attach scripts of key on every
// link of one replica for d (a slow link, well inside node_timeout).
func reattachHold(key string, armed *atomic.Bool, d time.Duration) mitmHook {
	return func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if ok && armed.Load() && len(keys) == 2 && keys[0] == key && len(argv) == 5 && strings.HasSuffix(argv[3], "@") {
			time.Sleep(d)
		}
		return nil
	}
}

// TestHungUpReattachBindsTheLockToItsConnection: connection X holds a
// session lock. The client re-attaches it on connection Y of the same
// replica and hangs Y up while Y's round is on its way (links 300 ms slow,
// node_timeout 1 s: nothing failed). The round still lands (a cancel does
// not unsend it) and moves the lock to Y (the re-attach contract: a lock
// moves when the round is sent, answered or not), and Y's close releases
// it at once, not at its TTL; X's close then releases nothing. (Helper-65
// found this round booked nowhere, the lock expiring under X; an earlier
// contract then handed it back to X's booking.)
func TestHungUpReattachBindsTheLockToItsConnection(t *testing.T) {
	const key, ttl = "attack:hangup", 10000 // ms: an expiry would take this long
	servers := redistest.Start(t, 3)
	var armed atomic.Bool
	h := replicaThrough(t, servers, reattachHold(key, &armed, 300*time.Millisecond), func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
	})
	ctx := t.Context()
	warm := h.Client()
	harness.Eventually(t, "ready", func() bool {
		_, err := warm.Do(ctx, "LOCK.ACQUIRE", "attack:warm", "w", 5000).Int64()
		return err == nil
	})
	x := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer x.Close()
	token, err := x.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	y := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 100 * time.Millisecond})
	_ = y.Ping(ctx).Err()
	armed.Store(true)
	_, yerr := y.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64() // times out client-side: go-redis closes the conn
	_ = y.Close()
	time.Sleep(400 * time.Millisecond)
	armed.Store(false)
	releasedAtYsClose(t, h.Addr, x, key, ttl, yerr, token)
}

// latency is a TCP forwarder in front of backend that delays every byte
// the proxy sends by d (pure latency: no throughput limit, order kept).
func latency(t *testing.T, backend string, d time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				_ = c.Close()
				continue
			}
			type chunk struct {
				at time.Time
				b  []byte
			}
			q := make(chan chunk, 1<<16)
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
			go func() {
				defer s.Close()
				for ch := range q {
					time.Sleep(time.Until(ch.at))
					if _, err := s.Write(ch.b); err != nil {
						return
					}
				}
			}()
			go func() {
				defer close(q)
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						q <- chunk{time.Now().Add(d), append([]byte(nil), buf[:n]...)}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestQueuedReattachesKeepTheLock: a client re-attaches its session
// lock through many connections of one replica at once (a pool
// reconnecting after a failover), its backends 25 ms away (no fault).
// Engine.Reattach now runs them one at a time, each holding the lock's
// re-attach slot for a read, an extend and its booking: the last ones
// queue for most of their TTL. One whose extend is sent with little of
// its window left moves the lock on a quorum and is then judged
// ErrValiditySpent (or its reply lapses in settle): it booked nothing (or
// its booking was dropped), but the connection booked before it was
// unbooked or no longer reached the lock (helper-65). Now a round sent
// is booked whatever its verdict. Every connection stays open, each
// answered the token or NOQUORUM: the lock must not be lost.
func TestQueuedReattachesKeepTheLock(t *testing.T) {
	sleepBound(t)
	for _, n := range []int{8, 16} {
		t.Run(strconv.Itoa(n), func(t *testing.T) { queuedReattaches(t, n) })
	}
}

func queuedReattaches(t *testing.T, conns int) {
	const key, ttl = "attack:queue", 900
	servers := redistest.Start(t, 3)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Quarantine = false
	cfg.NodeTimeout, cfg.TimeoutFactor = time.Second, 0.5
	cfg.NativeLockDelay, cfg.SessionTick = 0, 250*time.Millisecond
	cfg.MaxSessionLocksPerUser = 0
	for _, s := range servers {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: latency(t, s.Addr, 25*time.Millisecond)})
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := harness.Of(t, servers, cfg)
	_, h.Addr = h.Serve()
	ctx := t.Context()
	first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer first.Close()
	var token int64
	harness.Eventually(t, "ready", func() bool {
		var err error
		token, err = first.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		return err == nil
	})
	cs := make([]*redis.Client, conns)
	for i := range cs {
		cs[i] = redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		defer cs[i].Close()
		_ = cs[i].Ping(ctx).Err()
	}
	got, errs := make([]int64, conns), make([]error, conns)
	done := make(chan struct{}, conns)
	for i, c := range cs {
		go func() {
			got[i], errs[i] = c.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
			done <- struct{}{}
		}()
	}
	for range cs {
		<-done
	}
	told, other := 0, map[string]int{}
	for i := range cs {
		switch {
		case errs[i] == nil && got[i] == token:
			told++
		case errs[i] == nil:
			t.Fatalf("re-attach %d answered token %d; the lock's is %d", i, got[i], token)
		default:
			msg := errs[i].Error()
			if len(msg) > 60 {
				msg = msg[:60]
			}
			other[msg]++
		}
	}
	t.Logf("%d of %d re-attaches answered the token; others: %v", told, conns, other)
	thief := redis.NewClient(&redis.Options{Addr: h.Addr, MaxRetries: -1})
	defer thief.Close()
	if tok := thiefGets(t, thief, key, 3*ttl*time.Millisecond); tok != 0 {
		t.Fatalf("another owner got token %d while %d open connections had been answered the lock's token %d (answers: %v)", tok, told+1, token, other)
	}
}

// TestThreeReplicasRandomReattachDelays: three replicas re-attach one session
// lock at once over five backends, each replica's re-attach scripts held a
// random 0-300 ms per backend (node_timeout 1 s: no fault). Whatever they
// answer (token or NOQUORUM), with every connection open the lock must
// outlive its TTL twice over.
func TestThreeReplicasRandomReattachDelays(t *testing.T) {
	sleepBound(t)
	const ttl = 1500
	servers := redistest.Start(t, 5)
	var armed atomic.Bool
	delays := make([]map[int]time.Duration, 3)
	var hs []*harness.Harness
	for r := range 3 {
		delays[r] = map[int]time.Duration{}
		d := delays[r]
		hook := func(i int, args []string) []string {
			keys, argv, ok := ldScriptArgs(args)
			if ok && armed.Load() && len(keys) == 2 && strings.HasPrefix(keys[0], "attack:three") && len(argv) == 5 && strings.HasSuffix(argv[3], "@") {
				time.Sleep(d[i]) // written only while disarmed
			}
			return nil
		}
		hs = append(hs, replicaThrough(t, servers, hook, func(c *config.Config) {
			c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
		}))
	}
	ctx := t.Context()
	for _, h := range hs {
		c := h.Client()
		harness.Eventually(t, "ready", func() bool {
			_, err := c.Do(ctx, "LOCK.ACQUIRE", "attack:warm", "w", 100).Int64()
			return err == nil || errors.Is(err, redis.Nil)
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3 {
		key := "attack:three:" + strconv.Itoa(trial)
		for r := range 3 {
			for i := range 5 {
				delays[r][i] = time.Duration(rng.IntN(300)) * time.Millisecond
			}
		}
		first := redis.NewClient(&redis.Options{Addr: hs[trial%3].Addr, PoolSize: 1, MaxRetries: -1})
		defer first.Close()
		token, err := first.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		var conns []*redis.Client
		for _, h := range hs {
			c := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second})
			defer c.Close()
			_ = c.Ping(ctx).Err()
			conns = append(conns, c)
		}
		armed.Store(true)
		got, errs := make([]int64, 3), make([]error, 3)
		done := make(chan struct{}, 3)
		for i, c := range conns {
			go func() {
				got[i], errs[i] = c.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
				done <- struct{}{}
			}()
		}
		for range conns {
			<-done
		}
		armed.Store(false)
		thief := redis.NewClient(&redis.Options{Addr: hs[0].Addr, MaxRetries: -1})
		defer thief.Close()
		for end := time.Now().Add(2 * ttl * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			tok, err := thief.Do(ctx, "LOCK.ACQUIRE", key, "thief", 1000).Int64()
			if err == nil {
				t.Fatalf("trial %d (delays %v): another owner got token %d; re-attaches answered %v %v (lock's token %d); notes %q",
					trial, delays, tok, got, errs, token, review38Notes(hs[0], key))
			}
		}
		t.Logf("trial %d: answers %v %v", trial, got, errs)
	}
}

// reattachHoldPrefix is reattachHold for every key starting with prefix.
func reattachHoldPrefix(prefix string, armed *atomic.Bool, d time.Duration) mitmHook {
	return func(i int, args []string) []string {
		keys, argv, ok := ldScriptArgs(args)
		if ok && armed.Load() && len(keys) == 2 && strings.HasPrefix(keys[0], prefix) && len(argv) == 5 && strings.HasSuffix(argv[3], "@") {
			time.Sleep(d)
		}
		return nil
	}
}

// TestAbandonedReattachOverridesTheAnsweredOne: connection X on replica R1
// holds a session lock. The client re-attaches it on connection Y of R1
// (links 300 ms slow, node_timeout 1 s: no fault) and hangs Y up; it then
// re-attaches on connection Z of replica R2, which answers the lock's token
// and books it. Y's round, sent before the hang-up, lands after Z's.
// Both read the acquire's round, so both are of order 1 with a random low
// part: about half the time Y's is the larger, reattach.lua moves every
// backend to Y's round, and Z's booking reaches nothing. On 0abb9d4 the
// hung-up Y hands its round to X's booking (adopt): X, which the client
// leaves since it moved the lock to Z, releases it at its close. On
// 8fc6d5d nobody renews Y's round: the lock expires. Either way another
// owner takes the lock while Z, told it holds it, is open (helper-66; it
// failed 4 of 4 on 0abb9d4). Re-attaches of one generation are now ordered
// by their send time: Y's late round moves no backend Z's holds.
func TestAbandonedReattachOverridesTheAnsweredOne(t *testing.T) {
	sleepBound(t)
	const prefix, ttl = "attack:abandon:", 1500
	servers := redistest.Start(t, 3)
	var armed atomic.Bool
	mut := func(c *config.Config) {
		c.NodeTimeout, c.NativeLockDelay, c.SessionTick = time.Second, 0, 250*time.Millisecond
	}
	h1 := replicaThrough(t, servers, reattachHoldPrefix(prefix, &armed, 300*time.Millisecond), mut)
	h2 := replicaThrough(t, servers, nil, mut)
	ctx := t.Context()
	warmPair(t, h1.Client(), h2.Client())
	for trial := range 4 {
		key := prefix + strconv.Itoa(trial)
		x := redis.NewClient(&redis.Options{Addr: h1.Addr, PoolSize: 1, MaxRetries: -1})
		token, err := x.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		y := redis.NewClient(&redis.Options{Addr: h1.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 100 * time.Millisecond})
		_ = y.Ping(ctx).Err()
		z := redis.NewClient(&redis.Options{Addr: h2.Addr, PoolSize: 1, MaxRetries: -1})
		defer z.Close()
		_ = z.Ping(ctx).Err()
		armed.Store(true)
		_, yerr := y.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64() // times out: go-redis closes the conn
		_ = y.Close()
		ztok, zerr := z.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if zerr != nil || ztok != token {
			t.Logf("trial %d: Z answered %d, %v (token %d): skipped", trial, ztok, zerr, token)
			_ = x.Close()
			continue
		}
		time.Sleep(500 * time.Millisecond) // Y's round lands
		armed.Store(false)
		notes := review38Notes(h1, key)
		_ = x.Close() // the lock moved to Z: the client leaves X
		thief := redis.NewClient(&redis.Options{Addr: h2.Addr, MaxRetries: -1})
		defer thief.Close()
		if tok := thiefGets(t, thief, key, 2*ttl*time.Millisecond); tok != 0 {
			t.Fatalf("trial %d: another owner got token %d while Z (answered token %d after Y hung up (%v), open, no fault) holds the lock; notes after Y landed %q; Z's LOCK.TOKEN now %v",
				trial, tok, ztok, yerr, notes, z.Do(ctx, "LOCK.TOKEN", key).Val())
		}
		t.Logf("trial %d held; notes after Y landed %q", trial, notes)
	}
}
