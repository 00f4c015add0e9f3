package e2e

// SELECT n (issue 31): databases 0-15 are separate lock namespaces.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestSelectSeparatesLocks: the same key in database 0 and database 9 is
// held by two owners at once; neither database's client can read, release,
// extend or delete the other's lock; a second replica sees database 9's
// lock in database 9 only; REDLOCK LOCKS lists each database's locks by
// the keys its clients named.
func TestSelectSeparatesLocks(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	db := func(addr string, n int) *redis.Client {
		return h.Client(func(o *redis.Options) { o.Addr, o.DB = addr, n })
	}
	zero, nine := db(h.Addr, 0), db(h.Addr, 9)
	if ok, err := zero.SetNX(ctx, "k", "owner-0", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("db 0 SET k NX = %v, %v", ok, err)
	}
	if ok, err := nine.SetNX(ctx, "k", "owner-9", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("db 9 SET k NX while db 0 holds k = %v, %v; want OK (another namespace)", ok, err)
	}
	if ok, err := nine.SetNX(ctx, "k", "thief", 30*time.Second).Result(); ok || err != nil {
		t.Fatalf("a second db 9 SET k NX = %v, %v; want nil (taken)", ok, err)
	}
	for _, c := range []struct {
		cl   *redis.Client
		want string
	}{{zero, "owner-0"}, {nine, "owner-9"}} {
		if v, err := c.cl.Get(ctx, "k").Result(); v != c.want || err != nil {
			t.Errorf("GET k = %q, %v; want %q", v, err, c.want)
		}
	}
	// Database 9 cannot touch database 0's lock.
	if n, err := nine.Eval(ctx, harness.UnlockScript, []string{"k"}, "owner-0").Int(); n != 0 || err != nil {
		t.Errorf("db 9 releasing with db 0's owner = %d, %v; want 0", n, err)
	}
	if n, err := nine.Eval(ctx, harness.ExtendScript, []string{"k"}, "owner-0", 60000).Int(); n != 0 || err != nil {
		t.Errorf("db 9 extending with db 0's owner = %d, %v; want 0", n, err)
	}
	if n, err := nine.Do(ctx, "LOCK.RELEASE", "k", "owner-0").Int(); n != 0 || err != nil {
		t.Errorf("db 9 LOCK.RELEASE with db 0's owner = %d, %v; want 0", n, err)
	}
	if n, err := nine.Del(ctx, "k").Result(); n != 1 || err != nil {
		t.Fatalf("db 9 DEL k = %d, %v; want 1 (its own)", n, err)
	}
	if v, err := zero.Get(ctx, "k").Result(); v != "owner-0" || err != nil {
		t.Fatalf("db 0's lock after db 9's release attempts and DEL: %q, %v", v, err)
	}
	if h.Holders("k", "owner-0") < 2 {
		t.Fatal("db 0's key k is not plain k on the backends")
	}
	if ok, err := nine.SetNX(ctx, "k", "owner-9b", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("db 9 retaking k = %v, %v", ok, err)
	}

	// A second replica: same namespace.
	_, addr2 := h.Serve()
	nine2, zero2 := db(addr2, 9), db(addr2, 0)
	if v, err := nine2.Get(ctx, "k").Result(); v != "owner-9b" || err != nil {
		t.Errorf("replica 2, db 9: GET k = %q, %v; want owner-9b", v, err)
	}
	if v, err := zero2.Get(ctx, "k").Result(); v != "owner-0" || err != nil {
		t.Errorf("replica 2, db 0: GET k = %q, %v; want owner-0", v, err)
	}
	if ok, err := nine2.SetNX(ctx, "k", "thief", 30*time.Second).Result(); ok || err != nil {
		t.Errorf("replica 2, db 9: SET k NX = %v, %v; want nil (taken)", ok, err)
	}

	// Admin listings name the client's keys, database by database.
	listing := func(c *redis.Client) map[string]string {
		t.Helper()
		v, err := c.Do(ctx, "REDLOCK", "LOCKS").Slice()
		if err != nil {
			t.Fatalf("REDLOCK LOCKS: %v", err)
		}
		m := map[string]string{}
		for _, e := range v {
			row := e.([]any)
			m[row[0].(string)] = row[1].(string)
		}
		return m
	}
	if m := listing(zero); len(m) != 1 || m["k"] != "owner-0" {
		t.Errorf("db 0 REDLOCK LOCKS = %v; want only k -> owner-0", m)
	}
	if m := listing(nine); len(m) != 1 || m["k"] != "owner-9b" {
		t.Errorf("db 9 REDLOCK LOCKS = %v; want only k -> owner-9b", m)
	}
	if info, err := nine.Do(ctx, "CLIENT", "INFO").Text(); err != nil || !strings.Contains(info, " db=9 ") {
		t.Errorf("CLIENT INFO in db 9 = %q, %v; want db=9", info, err)
	}
}

// TestSelectTokensPerDatabase: native fencing tokens only go up per
// (database, key), and a database's token is not another's.
func TestSelectTokensPerDatabase(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	zero := h.Client()
	nine := h.Client(func(o *redis.Options) { o.DB = 9 })
	var last [2]int64
	for i := range 3 {
		for j, c := range []*redis.Client{zero, nine} {
			tok, err := c.Do(ctx, "LOCK.ACQUIRE", "t", "o", 30000).Int64()
			if err != nil {
				t.Fatalf("round %d client %d: LOCK.ACQUIRE = %v", i, j, err)
			}
			if tok <= last[j] {
				t.Fatalf("round %d client %d: token %d after %d", i, j, tok, last[j])
			}
			last[j] = tok
		}
		// Both held at once, in their own databases.
		for j, c := range []*redis.Client{zero, nine} {
			if n, err := c.Do(ctx, "LOCK.RELEASE", "t", "o").Int(); n != 1 || err != nil {
				t.Fatalf("round %d client %d: LOCK.RELEASE = %d, %v", i, j, n, err)
			}
		}
	}
}

// TestSelectRedissonChannelIsGlobal: a Redisson unlock in database 9
// publishes on the channel the client named (pub/sub is not per database),
// and a subscriber in database 0 hears it, as on Redis.
func TestSelectRedissonChannelIsGlobal(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	nine := h.Client(func(o *redis.Options) { o.DB = 9 })
	sub := h.Client().Subscribe(ctx, "redisson_lock__channel:{r}")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	lock, unlock := clientScript(t, shaRLock), clientScript(t, shaRUnlock)
	if err := nine.Eval(ctx, lock, []string{"{r}"}, 30000, "uuid:1").Err(); err != redis.Nil {
		t.Fatalf("Redisson lock in db 9 = %v; want nil (granted)", err)
	}
	if ok, err := h.Client().SetNX(ctx, "{r}", "x", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("db 0 taking {r} while db 9 holds it = %v, %v; want OK", ok, err)
	}
	if n, err := nine.Eval(ctx, unlock, []string{"{r}", "redisson_lock__channel:{r}", "redisson_unlock_latch:{r}:1"},
		0, 30000, "uuid:1", "publish", 10000).Int(); n != 1 || err != nil {
		t.Fatalf("Redisson unlock in db 9 = %d, %v; want 1", n, err)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(rctx)
	if err != nil || msg.Channel != "redisson_lock__channel:{r}" {
		t.Fatalf("release notice = %v, %v; want one on redisson_lock__channel:{r}", msg, err)
	}
}

// TestSelectBadIndex: SELECT's argument as Redis judges it.
func TestSelectBadIndex(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	c := h.Client()
	for _, arg := range []string{"16", "-1", "100", "99999999999999999999999", "x", "", "1.5", "+1", "01", " 1", "1 "} {
		err := c.Do(ctx, "SELECT", arg).Err()
		want := "ERR value is not an integer or out of range"
		if arg == "16" || arg == "-1" || arg == "100" {
			want = "ERR DB index is out of range"
		}
		if err == nil || err.Error() != want {
			t.Errorf("SELECT %q = %v; want %q", arg, err, want)
		}
	}
	if err := c.Do(ctx, "SELECT", "15").Err(); err != nil {
		t.Fatalf("SELECT 15 = %v", err)
	}
	if err := c.Do(ctx, "SELECT", "0", "1").Err(); err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
		t.Errorf("SELECT 0 1 = %v; want the arity error", err)
	}
}

// TestSelectScriptDatabase: @sesamecare-oss/redlock's scripts SELECT
// ARGV[1] themselves: a connection in database 0 locks in the database the
// script names, and an index Redis would refuse is refused.
func TestSelectScriptDatabase(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	zero := h.Client()
	nine := h.Client(func(o *redis.Options) { o.DB = 9 })
	acquire, release := clientScript(t, shaSesameAcq), clientScript(t, shaSesameRel)
	if n, err := zero.Eval(ctx, acquire, []string{"s"}, 9, "v9", 30000).Int(); n != 1 || err != nil {
		t.Fatalf("acquire selecting db 9 = %d, %v; want 1", n, err)
	}
	if v, err := nine.Get(ctx, "s").Result(); v != "v9" || err != nil {
		t.Fatalf("db 9 GET s = %q, %v; want v9", v, err)
	}
	if err := zero.Get(ctx, "s").Err(); err != redis.Nil {
		t.Fatalf("db 0 GET s = %v; want nil (the lock is db 9's)", err)
	}
	if n, err := zero.Eval(ctx, release, []string{"s"}, 0, "v9").Int(); n != 0 || err != nil {
		t.Fatalf("release selecting db 0 = %d, %v; want 0", n, err)
	}
	if n, err := nine.Eval(ctx, release, []string{"s"}, 9, "v9").Int(); n != 1 || err != nil {
		t.Fatalf("release selecting db 9 = %d, %v; want 1", n, err)
	}
	if err := zero.Eval(ctx, acquire, []string{"s"}, 16, "v", 30000).Err(); err == nil || err.Error() != "ERR DB index is out of range" {
		t.Fatalf("acquire selecting db 16 = %v; want ERR DB index is out of range", err)
	}
}

// TestSelectSessionsAndWaiters: a session lock and a waiter in database 9
// live beside database 0's lock on the same key: closing the session frees
// database 9's lock only, and the waiter woken there is database 9's.
func TestSelectSessionsAndWaiters(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	zero := h.Client()
	in9 := func() *redis.Client { return h.Client(func(o *redis.Options) { o.DB = 9 }) }
	sess, waiter := in9(), in9()
	if err := zero.Do(ctx, "LOCK.ACQUIRE", "w", "zero", 30000).Err(); err != nil {
		t.Fatalf("db 0 LOCK.ACQUIRE = %v", err)
	}
	if err := sess.Do(ctx, "LOCK.ACQUIRE", "w", "sess", 30000, "SESSION").Err(); err != nil {
		t.Fatalf("db 9 LOCK.ACQUIRE SESSION while db 0 holds w = %v; want a token", err)
	}
	got := make(chan error, 1)
	go func() { got <- waiter.Do(ctx, "LOCK.ACQUIRE", "w", "waiter", 30000, "WAIT", 20000).Err() }()
	harness.Eventually(t, "the db 9 waiter queued", func() bool {
		n, _ := h.Client().Info(ctx, "clients").Result()
		return strings.Contains(n, "blocked_clients:1")
	})
	_ = sess.Close() // its session lock goes with it
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("db 9 waiter = %v; want the lock once the session closed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("db 9 waiter not woken by the session's close")
	}
	if v, err := zero.Get(ctx, "w").Result(); v != "zero" || err != nil {
		t.Fatalf("db 0's lock after db 9's session closed: %q, %v", v, err)
	}
	if v, err := in9().Get(ctx, "w").Result(); v != "waiter" || err != nil {
		t.Fatalf("db 9's lock: %q, %v; want the waiter's", v, err)
	}
}

// TestSelectReset: RESET goes back to database 0 (and RESP2), as on Redis,
// on the same connection; with a password it signs the connection out.
func TestSelectReset(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.RequirePass = "pw" })
	ctx := t.Context()
	c := h.Client(func(o *redis.Options) { o.Password, o.DB, o.PoolSize = "pw", 9, 1 })
	if ok, err := c.SetNX(ctx, "r", "nine", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("db 9 SET r NX = %v, %v", ok, err)
	}
	conn := c.Conn()
	t.Cleanup(func() { _ = conn.Close() })
	if v, err := conn.Get(ctx, "r").Result(); v != "nine" || err != nil {
		t.Fatalf("db 9 GET r = %q, %v", v, err)
	}
	if s, err := conn.Do(ctx, "RESET").Text(); s != "RESET" || err != nil {
		t.Fatalf("RESET = %q, %v", s, err)
	}
	if err := conn.Get(ctx, "r").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Fatalf("GET after RESET = %v; want NOAUTH (signed out)", err)
	}
	if err := conn.Do(ctx, "AUTH", "pw").Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Get(ctx, "r").Err(); err != redis.Nil {
		t.Fatalf("GET r after RESET and AUTH = %v; want nil (database 0)", err)
	}
	if info, err := conn.Do(ctx, "CLIENT", "INFO").Text(); err != nil || !strings.Contains(info, " db=0 ") || !strings.Contains(info, " resp=2 ") {
		t.Errorf("CLIENT INFO after RESET = %q, %v; want db=0 resp=2", info, err)
	}
}

// TestSelectBoundLocks: locks without a TTL (bound to their connection)
// are per database too.
func TestSelectBoundLocks(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	zero := h.Client()
	nine := h.Client(func(o *redis.Options) { o.DB = 9 })
	for _, c := range []*redis.Client{zero, nine} {
		if ok, err := c.SetNX(ctx, "b", "held", 0).Result(); !ok || err != nil {
			t.Fatalf("SET b NX (no TTL) = %v, %v; want OK in each database", ok, err)
		}
	}
	if ok, err := nine.SetNX(ctx, "b", "other", 0).Result(); ok || err != nil {
		t.Fatalf("a second SET b NX in db 9 = %v, %v; want nil (taken)", ok, err)
	}
}
