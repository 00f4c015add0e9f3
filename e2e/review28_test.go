package e2e

// Review of the re-attach (issue 28): attacks on LOCK.ACQUIRE ... SESSION by
// the lock's holder on a new connection.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// respCommand encodes args as one RESP array.
func respCommand(args ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// A holder's re-attach that it gave up on (its reply did not come in time:
// replica A's links to two backends are slow) and retried through replica
// B: B answers the lock's token, so the holder believes it holds the lock,
// bound to its new connection, for at least the TTL it asked for. A's stale
// round lands on the slow backends after B's and names A's round there;
// A's connection is closed (the holder hung up on it), so A releases "its"
// session lock at the close, by that round, which the majority names: the
// lock is gone inside the window B's reply promised, and another owner takes
// it. The Go client (client/session.go) does exactly this: a re-attach that
// errors (a read timeout) is closed and sent again on a new connection.
func TestReview28StaleReattachReleasesTheRetriedOne(t *testing.T) {
	sleepBound(t)
	servers := redistest.Start(t, 3)
	_, links, addrA, addrB := splitReplicas(t, servers, "slow", func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor = harness.TestNodeTimeout, harness.TestTimeoutFactor
		c.SessionTick, c.NativeLockDelay = 250*time.Millisecond, 0
	})
	viaB := replicaAt(t, addrB)
	ctx := context.Background()
	const key, owner, ttl = "review28:stale", "owner", 4000

	holder := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer holder.Close()
	token, err := holder.Do(ctx, "LOCK.ACQUIRE", key, owner, ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		js := `{"name":"slow","type":"latency","stream":"upstream","toxicity":1,"attributes":{"latency":600}}`
		if _, err := l.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}
	// The holder's connection broke; it re-attaches through A, waits 200 ms
	// for the answer, gives up and hangs up.
	nc, err := net.Dial("tcp", addrA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(respCommand("LOCK.ACQUIRE", key, owner, fmt.Sprint(ttl), "SESSION")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_ = nc.Close()
	// ... and again through B, which answers at once.
	retry := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer retry.Close()
	sent := time.Now()
	got, err := retry.Do(ctx, "LOCK.ACQUIRE", key, owner, ttl, "SESSION").Int64()
	if err != nil || got != token {
		t.Fatalf("re-attach through B = %d, %v; want the lock's token %d", got, err, token)
	}
	// A's round lands 600 ms after it was sent, its release at the close
	// 600 ms after that.
	time.Sleep(1800 * time.Millisecond)
	for _, l := range links {
		l.Toxics.ResetToxics(ctx)
	}
	for time.Since(sent) < ttl*time.Millisecond-500*time.Millisecond {
		if ok, err := viaB.SetNX(ctx, key, "thief", time.Second).Result(); err == nil && ok {
			t.Fatalf("another owner took the lock %v after B answered the re-attach (token %d, TTL %d ms, connection still open): "+
				"the abandoned re-attach through A released it at its close", time.Since(sent).Round(time.Millisecond), token, ttl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tok, err := viaB.Do(ctx, "LOCK.TOKEN", key, owner).Int64(); err != nil || tok != token {
		t.Fatalf("LOCK.TOKEN after the stale re-attach = %d, %v; want %d", tok, err, token)
	}
}

// Several re-attaches of one lock by its holder through ONE replica at once
// (a client retrying on fresh connections, or a pool): each answers the
// token, and each connection stays open. The lock must stay renewed by one
// of them while they live. reattach() runs the round first and only then
// unbooks every connection's booking and books its own: the last to book
// need not be the round the backends name last, and then nobody renews it.
func TestReview28ConcurrentReattachOnOneReplicaKeepsItRenewed(t *testing.T) {
	sleepBound(t)
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = tick; c.NativeLockDelay = 0 })
	ctx := context.Background()
	viaA := h.Client()
	const ttl = 1500 // ms: six ticks
	for trial := range 3 {
		key := fmt.Sprint("review28:many:", trial)
		first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
		token, err := first.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		var conns []*redis.Client
		for range 6 {
			conns = append(conns, redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1}))
		}
		var wg sync.WaitGroup
		answered := make([]error, len(conns))
		for i, c := range conns {
			_ = c.Ping(ctx).Err() // dialled before the race
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok, err := c.Do(ctx, "LOCK.ACQUIRE", key, "o", ttl, "SESSION").Int64()
				if err == nil && tok != token {
					err = fmt.Errorf("token %d, want %d", tok, token)
				}
				answered[i] = err
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range answered {
			if err == nil {
				ok++
			} else if !isNoQuorum(err) {
				t.Fatalf("trial %d: concurrent re-attach: %v", trial, err)
			}
		}
		_ = first.Close()
		if ok > 0 {
			// At least one live connection was answered the token: the lock
			// must outlive several TTLs while all of them stay open.
			deadline := time.Now().Add(3 * ttl * time.Millisecond)
			for time.Now().Before(deadline) {
				if tok, err := viaA.Do(ctx, "LOCK.ACQUIRE", key, "thief", 1000).Int64(); err == nil {
					t.Fatalf("trial %d: another owner got token %d while %d live connections had been answered the "+
						"re-attach (nobody renews the lock: the last to book is not the round the backends name)", trial, tok, ok)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// Probes of the re-attach's edges, each an expectation of the safety
// contract: a re-attach asking for more than max_ttl is refused; one on
// the connection that holds the lock keeps one booking and one token; a
// pipeline re-attach, release, acquire on another connection ends with a
// fresh lock (a larger token) that the old connection's close leaves
// alone; a re-attach while another owner waits in the fair queue neither
// changes the token nor loses the waiter its turn; a re-attach from
// another SELECT database is that database's lock; after the lock expired
// and another owner took it the old owner's re-attach answers nil.
func TestReview28ReattachEdges(t *testing.T) {
	sleepBound(t)
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) {
		c.SessionTick, c.NativeLockDelay, c.MaxTTL = tick, 0, 30*time.Second
	})
	ctx := context.Background()
	viaA := h.Client()
	dial := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 20 * time.Second})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	// Longer than max_ttl.
	old := dial()
	token, err := old.Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := dial().Do(ctx, "LOCK.ACQUIRE", "edge", "o", 3_600_000, "SESSION").Err(); err == nil || isNoQuorum(err) {
		t.Fatalf("re-attach with a TTL past max_ttl = %v; want a refusal", err)
	}
	// On the connection that holds it.
	for range 3 {
		if got, err := old.Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "SESSION").Int64(); err != nil || got != token {
			t.Fatalf("re-attach on the holding connection = %d, %v; want %d", got, err, token)
		}
	}
	if n := infoInt(t, viaA, "session_locks"); n != 1 {
		t.Fatalf("session_locks = %d after re-attaching on the same connection; want 1", n)
	}
	time.Sleep(3 * time.Second) // renewed past its TTL
	if got, err := viaA.Do(ctx, "LOCK.TOKEN", "edge", "o").Int64(); err != nil || got != token {
		t.Fatalf("LOCK.TOKEN after re-attaches on the same connection = %d, %v; want %d", got, err, token)
	}

	// A pipeline on another connection: re-attach, release, acquire.
	other := dial()
	cmds, _ := other.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "SESSION")
		p.Do(ctx, "LOCK.RELEASE", "edge", "o")
		p.Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "SESSION")
		return nil
	})
	r0, e0 := cmds[0].(*redis.Cmd).Int64()
	r1, e1 := cmds[1].(*redis.Cmd).Int64()
	r2, e2 := cmds[2].(*redis.Cmd).Int64()
	if e0 != nil || r0 != token || e1 != nil || r1 != 1 || e2 != nil || r2 <= token {
		t.Fatalf("pipeline re-attach, release, acquire = (%d %v) (%d %v) (%d %v); want %d, 1, a token above it", r0, e0, r1, e1, r2, e2, token)
	}
	_ = old.Close()
	time.Sleep(4 * tick)
	if got, err := viaA.Do(ctx, "LOCK.TOKEN", "edge", "o").Int64(); err != nil || got != r2 {
		t.Fatalf("LOCK.TOKEN after the old connection closed = %d, %v; want the new grant's %d", got, err, r2)
	}
	time.Sleep(2500 * time.Millisecond) // past the TTL: the pipeline's connection renews it
	if ok, err := viaA.SetNX(ctx, "edge", "thief", time.Second).Result(); err != nil || ok {
		t.Fatalf("SET NX by another owner = %v, %v; want refused", ok, err)
	}

	// With a waiter queued.
	waiter := dial()
	waited := make(chan error, 1)
	var wtok int64
	go func() {
		var err error
		wtok, err = waiter.Do(ctx, "LOCK.ACQUIRE", "edge", "w", 2000, "WAIT", 15000).Int64()
		waited <- err
	}()
	harness.Eventually(t, "the waiter queued", func() bool { return queuedOn(t, h, "edge", "w") >= 2 })
	third := dial()
	if got, err := third.Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "WAIT", 5000, "SESSION").Int64(); err != nil || got != r2 {
		t.Fatalf("re-attach with a waiter queued = %d, %v; want %d", got, err, r2)
	}
	select {
	case err := <-waited:
		t.Fatalf("the waiter was answered (%v, token %d) while the holder re-attached", err, wtok)
	case <-time.After(3 * time.Second):
	}
	_ = other.Close()
	_ = third.Close() // the lock's last connection: released, the waiter is next
	select {
	case err := <-waited:
		if err != nil || wtok <= r2 {
			t.Fatalf("the waiter after the holder's release = %d, %v; want a token above %d", wtok, err, r2)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken after the re-attached lock's connection closed")
	}
	// The old owner cannot re-attach the waiter's lock.
	if err := dial().Do(ctx, "LOCK.ACQUIRE", "edge", "o", 2000, "SESSION").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("re-attach by the previous owner after another took the lock = %v; want nil", err)
	}

	// Another database.
	db0 := dial()
	t0, err := db0.Do(ctx, "LOCK.ACQUIRE", "dbk", "o", 2000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	db1 := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1, DB: 1})
	defer db1.Close()
	t1, err := db1.Do(ctx, "LOCK.ACQUIRE", "dbk", "o", 2000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	_ = db1.Close()
	time.Sleep(3 * time.Second)
	if got, err := db0.Do(ctx, "LOCK.TOKEN", "dbk", "o").Int64(); err != nil || got != t0 {
		t.Fatalf("database 0's lock after database 1's (token %d) came and went = %d, %v; want %d", t1, got, err, t0)
	}
}

// A lock taken with SET NX PX has no token until its first read; two of
// its holder's re-attaches through two replicas at once each answer the
// token they read. One lock, one token: both answers, and every later
// LOCK.TOKEN, must be the same.
func TestReview28ConcurrentReattachOfAPlainLockOneToken(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = 250 * time.Millisecond; c.NativeLockDelay = 0 })
	_, addrB := h.Serve()
	ctx := context.Background()
	viaA, viaB := h.Client(), replicaAt(t, addrB)
	for trial := range 15 {
		key := fmt.Sprint("review28:plain:", trial)
		if ok, err := viaA.SetNX(ctx, key, "v", 5*time.Second).Result(); err != nil || !ok {
			t.Fatalf("SET NX PX = %v, %v", ok, err)
		}
		conns := []*redis.Client{
			redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1}),
			redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1}),
		}
		for _, c := range conns {
			_ = c.Ping(ctx).Err()
		}
		toks := make([]int64, len(conns))
		errs := make([]error, len(conns))
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				toks[i], errs[i] = c.Do(ctx, "LOCK.ACQUIRE", key, "v", 3000, "SESSION").Int64()
			}()
		}
		wg.Wait()
		seen := map[int64]bool{}
		for i := range conns {
			switch {
			case errs[i] == nil:
				seen[toks[i]] = true
			case !isNoQuorum(errs[i]):
				t.Fatalf("trial %d: re-attach %d: %v", trial, i, errs[i])
			}
		}
		for _, c := range []*redis.Client{viaA, viaB} {
			if tok, err := c.Do(ctx, "LOCK.TOKEN", key).Int64(); err == nil {
				seen[tok] = true
			}
		}
		if len(seen) > 1 {
			t.Fatalf("trial %d: one lock answered several tokens: %v", trial, seen)
		}
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// docs/OPERATIONS.md: "A connection-bound SET NX cannot be re-attached (a
// second SET NX answers nil on Redis too): it lasts its bound_lease and
// then expires." A LOCK.ACQUIRE ... SESSION naming the bound lock's value
// from another connection is a second acquire by another client: nil.
func TestReview28BoundSetNXIsNotReattached(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick, c.BoundLease = 250*time.Millisecond, 3*time.Second })
	ctx := context.Background()
	a := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer a.Close()
	if got, err := a.Do(ctx, "SET", "review28:bound", "tokA", "NX").Result(); err != nil || got != "OK" {
		t.Fatalf("SET NX without TTL = %v, %v", got, err)
	}
	b := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer b.Close()
	if tok, err := b.Do(ctx, "LOCK.ACQUIRE", "review28:bound", "tokA", 3000, "SESSION").Int64(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE SESSION of a connection-bound SET NX lock from another connection = %d, %v; "+
			"want nil (OPERATIONS.md: it cannot be re-attached)", tok, err)
	}
}

// A re-attach whose reply waits behind a pipeline neighbour's WAIT longer
// than its TTL: it used to answer "NOQUORUM ... rolled back" although
// nothing was rolled back (an extend cannot be): it had taken the lock from
// the holding connection and noted a round nobody booked, so the lock
// expired and another owner took it while the holder's connection was open
// and never told (seen on main). A session lock's reply now goes out late
// while the renewer has kept its window open since the round: the
// re-attach answers the lock's token, the lock is the re-attaching
// connection's, renewed while it lives, and nobody else gets it.
func TestReview28LateReattachReplyKeepsTheLock(t *testing.T) {
	sleepBound(t)
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = tick; c.NativeLockDelay = 0 })
	ctx := context.Background()
	viaA := h.Client()
	holder := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer holder.Close()
	const ttl = 1000
	token, err := holder.Do(ctx, "LOCK.ACQUIRE", "review28:spent", "o", ttl, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := viaA.SetNX(ctx, "review28:busy", "x", 30*time.Second).Result(); err != nil || !ok {
		t.Fatal(ok, err)
	}
	other := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
	defer other.Close()
	cmds, _ := other.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "LOCK.ACQUIRE", "review28:busy", "w", 1000, "WAIT", 1100) // waits 1.1 s, then nil
		p.Do(ctx, "LOCK.ACQUIRE", "review28:spent", "o", ttl, "SESSION")
		return nil
	})
	reattach := cmds[1].(*redis.Cmd)
	if tok, err := reattach.Int64(); err != nil || tok != token {
		t.Fatalf("re-attach behind a 1.1 s WAIT = %d, %v; want the lock's token %d (renewed meanwhile)", tok, err, token)
	}
	deadline := time.Now().Add(4 * ttl * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := other.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if tok, err := viaA.Do(ctx, "LOCK.ACQUIRE", "review28:spent", "thief", 1000).Int64(); err == nil {
			t.Fatalf("another owner got token %d while the connection that re-attached the session lock (token %d) is open", tok, token)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The lock moved from a connection on replica A to one on B (a re-attach);
// its holder then releases it through B (LOCK.RELEASE answers 1). A still
// has the old connection's booking until its next renewal finds the lock
// gone, and a session renewal sets a lock again where both key and note
// are absent (pexpireifeq.lua's restore): the released lock comes back on
// every backend for a whole TTL, held by nobody, and another owner is
// refused it.
func TestReview28ReleasedAfterReattachStaysReleased(t *testing.T) {
	sleepBound(t)
	const tick = 250 * time.Millisecond
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = tick }) // the default lock-delay: a released lock is free at once
	_, addrB := h.Serve()
	ctx := context.Background()
	viaB := replicaAt(t, addrB)
	for trial := range 5 {
		key := fmt.Sprint("review28:released:", trial)
		first := redis.NewClient(&redis.Options{Addr: h.Addr, PoolSize: 1, MaxRetries: -1})
		token, err := first.Do(ctx, "LOCK.ACQUIRE", key, "o", 3000, "SESSION").Int64()
		if err != nil {
			t.Fatal(err)
		}
		second := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
		if got, err := second.Do(ctx, "LOCK.ACQUIRE", key, "o", 3000, "SESSION").Int64(); err != nil || got != token {
			t.Fatalf("re-attach through B = %d, %v; want %d", got, err, token)
		}
		if n, err := second.Do(ctx, "LOCK.RELEASE", key, "o").Int64(); err != nil || n != 1 {
			t.Fatalf("LOCK.RELEASE through B = %d, %v; want 1", n, err)
		}
		released := time.Now()
		time.Sleep(2 * time.Second) // A's renewer passes over the old booking (due a third into 3 s)
		if ok, err := viaB.SetNX(ctx, key, "next", time.Second).Result(); err != nil || !ok {
			t.Fatalf("trial %d: SET NX by another owner %v after the holder's release = %v, %v (holders of the old value: %d); want OK",
				trial, time.Since(released).Round(time.Millisecond), ok, err, h.Holders(key, "o"))
		}
		_ = first.Close()
		_ = second.Close()
	}
}
