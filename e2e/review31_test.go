package e2e

// Review of issue 31 (connection-bound locks and SELECT): each test fails
// while the bug it names exists.

import (
	"context"
	"errors"
	"github.com/redis/go-redis/v9"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview31ForceUnlockBoundLockStaysUnlocked: REDLOCK FORCEUNLOCK of a
// connection-bound (or SESSION) lock deletes the key and its note on every
// backend, but leaves the lock in the renewer's book (DEL unbooks it,
// FORCEUNLOCK does not): the next renewal finds key and note absent and
// restores the lock, which the renewals after count as held again. The
// admin's force unlock is undone within a tick and the lock lives on as
// long as the connection.
func TestReview31ForceUnlockBoundLockStaysUnlocked(t *testing.T) {
	sleepBound(t)
	h := boundHarness(t)
	ctx := t.Context()
	a, admin := oneConn(h), oneConn(h)
	for _, kind := range []string{"bound", "session"} {
		key := "review31:force:" + kind
		var err error
		if kind == "bound" {
			err = a.Do(ctx, "SET", key, "tokA", "NX").Err()
		} else {
			err = a.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 1500, "SESSION").Err()
		}
		if err != nil {
			t.Fatalf("%s acquire: %v", kind, err)
		}
		// The grant answered at a quorum: a copy still on its way to a slow
		// backend would land after the force unlock (the CI of dade69e saw
		// 2 of 5 back), a leftover of the acquire, not the renewer's restore.
		harness.Eventually(t, "the acquire landed on every backend", func() bool { return h.Holders(key, "tokA") == 5 })
		if n, err := admin.Do(ctx, "REDLOCK", "FORCEUNLOCK", key).Int(); err != nil || n != 1 {
			t.Fatalf("REDLOCK FORCEUNLOCK %s = %d, %v; want 1", key, n, err)
		}
		// Watched for two leases: a restore shows as the key back on the backends.
		most := 0
		for end := time.Now().Add(2 * boundLease); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			most = max(most, h.Holders(key, "tokA"))
		}
		if most != 0 {
			t.Errorf("%s lock force-unlocked by an admin came back on %d of 5 backends (the renewer restored it)", kind, most)
		}
		if got, err := admin.Get(ctx, key).Result(); err == nil {
			t.Errorf("%s lock: GET after FORCEUNLOCK = %q; want nil", kind, got)
		}
	}
}

// TestReview31BoundLocksCountInSessionLimit: max_session_locks_per_client
// (and _per_user) bound the session locks a connection makes the proxy
// renew forever (issue 25). A connection-bound lock is one (it is booked
// and renewed exactly like LOCK.ACQUIRE ... SESSION), but SET k v NX never
// reserves a place: a connection floods the renewer past the limit.
func TestReview31BoundLocksCountInSessionLimit(t *testing.T) {
	h := boundHarnessWith(t, func(c *config.Config) { c.MaxSessionLocksPerClient = 3 })
	ctx := t.Context()
	a := oneConn(h)
	granted := 0
	var refusal error
	for i := range 6 {
		err := a.Do(ctx, "SET", "review31:flood:"+string(rune('a'+i)), "tok", "NX").Err()
		if err != nil {
			refusal = err
			break
		}
		granted++
	}
	if granted > 3 || refusal == nil || !strings.Contains(refusal.Error(), "max_session_locks_per_client") {
		t.Fatalf("%d bound locks granted on one connection with max_session_locks_per_client 3 (refusal: %v); want 3, then the limit's error",
			granted, refusal)
	}
	// And a SESSION lock after them is refused as well (every booked lock counts).
	if err := a.Do(ctx, "LOCK.ACQUIRE", "review31:flood:s", "tok", 1500, "SESSION").Err(); err == nil {
		t.Fatal("LOCK.ACQUIRE SESSION past the limit granted")
	}
}

// boundHarnessWith is boundHarness with more configuration.
func boundHarnessWith(t *testing.T, more func(*config.Config)) *harness.Harness {
	return harness.New(t, 5, func(c *config.Config) {
		c.SessionTick, c.BoundLease = sessionTick, boundLease
		more(c)
	})
}

// TestReview31ExtendedBoundLockKeepsItsWindow: an extend that answers 1
// promises its caller the lock for the TTL it asked (DESIGN: extend has
// acquire's validity rule). A connection-bound lock extended by its owner
// (the compare-and-PEXPIRE script, from another connection of the
// owner's pool, through another replica) loses that window two ways:
//   - closing: the binding connection closes and its release deletes the
//     lock the extend just promised for 30 s;
//   - shutdown: the binding replica's renewer sets the TTL back to the
//     lease at its next renewal (the renewal "changes its backend TTL
//     until the next renewal only", README), then the replica shuts down
//     gracefully and leaves the lock to that lease: it expires long
//     before the 30 s.
//
// Either way a third client takes the lock while the extender's 30 s
// window is open: two owners. session-closing shows the closing case is
// older than bound locks: a SESSION lock extended by LOCK.EXTEND from
// another connection is released by its binding connection's close too.
func TestReview31ExtendedBoundLockKeepsItsWindow(t *testing.T) {
	sleepBound(t)
	for _, how := range []string{"closing", "shutdown", "session-closing"} {
		t.Run(how, func(t *testing.T) {
			h := boundHarness(t)
			ctx := t.Context()
			_, addr2 := h.Serve()
			on2 := func() *redis.Client {
				return h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
			}
			a, b, c := oneConn(h), on2(), on2()
			// session-closing: the same with a SESSION lock and LOCK.EXTEND.
			acquire := []any{"SET", "review31:ext", "tokA", "NX"}
			if how == "session-closing" {
				acquire = []any{"LOCK.ACQUIRE", "review31:ext", "tokA", 1500, "SESSION"}
			}
			if err := a.Do(ctx, acquire...).Err(); err != nil {
				t.Fatal(err)
			}
			extend := b.Eval(ctx, harness.ExtendScript, []string{"review31:ext"}, "tokA", 30000)
			if how == "session-closing" {
				extend = b.Do(ctx, "LOCK.EXTEND", "review31:ext", "tokA", 30000)
			}
			if n, err := extend.Int(); err != nil || n != 1 {
				t.Fatalf("the owner's extend to 30 s = %d, %v; want 1", n, err)
			}
			extended := time.Now()
			switch how {
			case "closing", "session-closing":
				_ = a.Close()
			case "shutdown":
				time.Sleep(3 * sessionTick) // the binding replica renews meanwhile
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_ = h.App.Server.Shutdown(sctx)
				cancel()
			}
			// Well inside the promised 30 s: nobody else may take it.
			for time.Since(extended) < 3*boundLease {
				if ok, err := c.SetNX(ctx, "review31:ext", "tokC", 60*time.Second).Result(); err == nil && ok {
					t.Fatalf("another client took the lock %v after its owner's extend to 30 s answered 1 (%s)",
						time.Since(extended).Round(time.Millisecond), how)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// inHouseRelease is a hand-written compare-and-delete an operator
// registers (scripts: meaning release): the text is not one the proxy
// recognises by its normalised form (the comment).
const inHouseRelease = `-- our release
if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end
return 0`

// TestReview31BoundLockReleasedByEveryReleaseStaysReleased: every release
// of a connection-bound lock must take it out of the renewer's book
// (unbook), as DEL, LOCK.RELEASE and the one-key scripts do. Three release
// paths call the engine's Release directly: a node-redlock / sesamecare
// multi-key release (scriptReleaseAll: allKeys), bsm/redislock v0.10's
// release (bsmRelease) and an operator-registered release script
// (runRegistered). The lock stays booked; the next renewal finds key and
// note absent and restores it on every backend for a lease: a lock its
// owner released (and was told so) blocks everyone.
func TestReview31BoundLockReleasedByEveryReleaseStaysReleased(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) {
		c.SessionTick, c.BoundLease = sessionTick, boundLease
		c.Scripts = []config.Script{{SHA1: redis.NewScript(inHouseRelease).Hash(), Meaning: "release", Key: 1, Owner: 1}}
	})
	ctx := t.Context()
	a := oneConn(h)
	releases := map[string]func(key string) (any, error){
		"node-redlock v5 release": func(key string) (any, error) {
			return a.Eval(ctx, clientScript(t, shaRedlock5Rel), []string{key}, "tokA").Result()
		},
		"bsm/redislock v0.10 release": func(key string) (any, error) {
			return a.EvalSha(ctx, "9470c810040e272ee6c579d8d4331aaf6332a7b1", []string{key}, "tokA").Result()
		},
		"registered release": func(key string) (any, error) {
			return a.Eval(ctx, inHouseRelease, []string{key}, "tokA").Result()
		},
	}
	for name, release := range releases {
		key := "review31:rel:" + name
		if err := a.Do(ctx, "SET", key, "tokA", "NX").Err(); err != nil {
			t.Fatalf("%s: SET NX = %v", name, err)
		}
		if got, err := release(key); err != nil {
			t.Errorf("%s = %v, %v; want released", name, got, err)
			continue
		}
		if got := h.Holders(key, "tokA"); got != 0 {
			t.Errorf("%s: still on %d backends after the release", name, got)
			continue
		}
		most := 0
		for end := time.Now().Add(2 * boundLease); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			most = max(most, h.Holders(key, "tokA"))
		}
		if most != 0 {
			t.Errorf("%s: the released bound lock came back on %d of 5 backends (renewed after its release)", name, most)
		}
	}
	if got := infoInt(t, a, "session_locks"); got != 0 {
		t.Errorf("session_locks = %d after every lock was released; want 0", got)
	}
}

// TestReview31DefaultBoundLeaseRenewable: bound_lease 0 means 10 s, or
// max_ttl when shorter. Validate refuses a bound_lease below three
// session ticks ("the renewer must reach a lock twice within its lease"),
// but only one that is set: max_ttl 400ms with the default session_tick
// (500ms) gives connection-bound locks a 400ms lease, shorter than one
// tick, and starts. Such a lock, which its holder believes it holds until it
// releases it, is lost as soon as a tick comes late in its lease.
// Either the configuration is refused, or such a SET NX is refused with the
// reason, or the lock stays held while its connection idles.
func TestReview31DefaultBoundLeaseRenewable(t *testing.T) {
	short := func(c *config.Config) {
		c.MaxTTL, c.SessionTick, c.BoundLease = 400*time.Millisecond, 500*time.Millisecond, 0
	}
	probe := config.Default()
	probe.Backends = []config.Backend{{Addr: "127.0.0.1:1"}, {Addr: "127.0.0.1:2"}, {Addr: "127.0.0.1:3"}}
	probe.NodeTimeout = 200 * time.Millisecond
	short(&probe)
	if err := probe.Validate(); err != nil {
		return // refused: fixed
	}
	h := harness.New(t, 5, short)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	for i := range 4 { // several phases against the tick
		key := "review31:lease:" + string(rune('a'+i))
		if err := a.Do(ctx, "SET", key, "tokA", "NX").Err(); err != nil {
			if strings.Contains(err.Error(), "session_tick") {
				return // refused with the reason: fixed, the third way
			}
			t.Fatalf("SET NX = %v", err)
		}
		time.Sleep(2 * time.Second)
		if got := h.Holders(key, "tokA"); got < 3 {
			t.Fatalf("a bound lock with the default lease (max_ttl 400ms, session_tick 500ms) is on %d of 5 backends after 2s of idling; "+
				"session_lost = %d: lost while its connection lives", got, infoInt(t, b, "session_lost"))
		}
		time.Sleep(time.Duration(i+1) * 130 * time.Millisecond)
	}
}

// TestReview31SelectPipelineBoundLocks: one pipeline switches databases
// between bound-lock commands on the same key and owner. Each command runs
// in the database selected before it; a release in database 0 leaves
// database 9's bound lock booked and held (the book is per mapped key), the
// released one is not restored, and the close frees database 9's.
func TestReview31SelectPipelineBoundLocks(t *testing.T) {
	sleepBound(t)
	h := boundHarness(t)
	ctx := t.Context()
	a, b := oneConn(h), oneConn(h)
	nine := h.Client(func(o *redis.Options) { o.DB, o.PoolSize = 9, 1 })
	p := a.Pipeline()
	p.Do(ctx, "SELECT", 9)
	set9 := p.Do(ctx, "SET", "review31:sel", "tok", "NX")
	p.Do(ctx, "SELECT", 0)
	set0 := p.Do(ctx, "SET", "review31:sel", "tok", "NX")
	rel0 := p.Eval(ctx, harness.UnlockScript, []string{"review31:sel"}, "tok")
	get0 := p.Do(ctx, "GET", "review31:sel")
	p.Do(ctx, "SELECT", 9)
	get9 := p.Do(ctx, "GET", "review31:sel")
	_, _ = p.Exec(ctx)
	if set9.Err() != nil || set0.Err() != nil {
		t.Fatalf("SET NX in db 9 / db 0 = %v / %v; want OK each", set9.Err(), set0.Err())
	}
	if n, err := rel0.Int(); n != 1 || err != nil {
		t.Fatalf("db 0 release = %d, %v; want 1", n, err)
	}
	if err := get0.Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("db 0 GET after its release = %v; want nil", err)
	}
	if v, err := get9.Text(); v != "tok" || err != nil {
		t.Fatalf("db 9 GET = %q, %v; want tok", v, err)
	}
	time.Sleep(3 * boundLease)
	if err := b.Get(ctx, "review31:sel").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("db 0's released bound lock after three leases: GET = %v; want nil (not restored)", err)
	}
	if v, err := nine.Get(ctx, "review31:sel").Result(); v != "tok" || err != nil {
		t.Fatalf("db 9's bound lock after three leases: %q, %v; want held (renewed)", v, err)
	}
	wantPTTL(t, nine, "review31:sel", -1)
	_ = a.Close()
	harness.Eventually(t, "db 9's bound lock freed by its connection's close", func() bool {
		return errors.Is(nine.Get(ctx, "review31:sel").Err(), redis.Nil)
	})
}

// TestReview31IdleTimeoutKeepsBoundLocks: a connection-bound lock is held
// while its connection lives, even idle (its holder has no TTL to watch and
// sends nothing: TestBoundLockHeldWhileIdle). With idle_timeout set, the
// proxy itself closes that idle connection and so releases the lock, while
// the holder still believes it holds it (a client library reconnects on
// its next command and is not told). Redis exempts blocked and subscribed
// clients from its timeout for the same reason.
func TestReview31IdleTimeoutKeepsBoundLocks(t *testing.T) {
	h := boundHarnessWith(t, func(c *config.Config) { c.IdleTimeout = time.Second })
	ctx := t.Context()
	a := oneConn(h)
	if err := a.Do(ctx, "SET", "review31:idle", "tokA", "NX").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // three idle timeouts, two leases
	b := oneConn(h)
	if ok, err := b.SetNX(ctx, "review31:idle", "tokB", 30*time.Second).Result(); ok || err != nil {
		t.Fatalf("another client's SET NX after the holder idled 3s (idle_timeout 1s) = %v, %v; want nil: the proxy closed the holder's connection and freed its lock",
			ok, err)
	}
}

// TestReview31SelectCrossDatabase: what a client in database 3 can do to
// the same key and owner in database 0: read its token, re-attach it by
// its owner's SESSION acquire, force-unlock it, wake its waiters. None
// may reach database 0.
func TestReview31SelectCrossDatabase(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	inDB := func(n int) *redis.Client { return h.Client(func(o *redis.Options) { o.DB, o.PoolSize = n, 1 }) }
	zero, three := inDB(0), inDB(3)
	tok0, err := zero.Do(ctx, "LOCK.ACQUIRE", "x", "o", 30000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := three.Do(ctx, "LOCK.TOKEN", "x").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("db 3 LOCK.TOKEN of db 0's lock = %v; want nil", err)
	}
	// The owner's SESSION acquire in db 3 is a new lock there, not a re-attach of db 0's.
	if _, err := three.Do(ctx, "LOCK.ACQUIRE", "x", "o", 30000, "SESSION").Int64(); err != nil {
		t.Fatalf("db 3 LOCK.ACQUIRE x o SESSION = %v; want its own lock", err)
	}
	if n, err := three.Do(ctx, "REDLOCK", "FORCEUNLOCK", "x").Int(); n != 1 || err != nil {
		t.Fatalf("db 3 FORCEUNLOCK x = %d, %v; want 1 (its own)", n, err)
	}
	if got, err := zero.Do(ctx, "LOCK.TOKEN", "x", "o").Int64(); got != tok0 || err != nil {
		t.Fatalf("db 0's lock after db 3's re-acquire and force unlock: token %d, %v; want %d", got, err, tok0)
	}
	// A waiter in db 0 is not woken into db 0's lock by db 3's release.
	if err := three.Do(ctx, "LOCK.ACQUIRE", "x", "p", 30000).Err(); err != nil {
		t.Fatal(err)
	}
	waiter := inDB(0)
	got := make(chan error, 1)
	go func() { got <- waiter.Do(ctx, "LOCK.ACQUIRE", "x", "w", 30000, "WAIT", 3000).Err() }()
	time.Sleep(500 * time.Millisecond)
	if n, err := three.Do(ctx, "LOCK.RELEASE", "x", "p").Int(); n != 1 || err != nil {
		t.Fatalf("db 3 release = %d, %v", n, err)
	}
	select {
	case err := <-got:
		t.Fatalf("db 0 waiter answered %v after db 3's release while db 0's lock is held", err)
	case <-time.After(time.Second):
	}
	if err := <-got; !errors.Is(err, redis.Nil) {
		t.Fatalf("db 0 waiter = %v; want nil once its wait ran out (db 0's lock held throughout)", err)
	}
}
