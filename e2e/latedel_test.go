package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLateDelNeverWipesALaterGrant: a DEL (force release) is answered by
// a quorum while its copies to two backends are still on their way; the
// key is then taken again, and the late copies land. They must not delete
// the new holder's copies: A holds the lock (300 ms) on all five; DEL
// through replica 1, whose links to D and E are 1 s slow, is answered 1
// by A, B, C; A's lock lapses on D, E; B is granted (2.9 s) by C, D, E
// through replica 0 (its links to A, B drop what is sent); the DEL's
// copies then land on D, E. A single delete round wiped B's lock there
// (B kept only C) and C was granted by A, B, D, E inside B's window: two
// holders. A force release now deletes only what its first round read.
func TestLateDelNeverWipesALaterGrant(t *testing.T) {
	sleepBound(t)
	e, addrs, c := lateReplicas(t)
	ctx, key := context.Background(), "latedel:k"
	set := lateFirstHolder(t, c[0], key)
	for _, i := range []int{3, 4} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":1000}`)
	}
	delSent := time.Now()
	n, err := c[1].Del(ctx, key).Result()
	t.Logf("DEL through replica 1 (D, E 1 s slow) = %v, %v, after %v", n, err, time.Since(delSent).Round(time.Millisecond))
	if err != nil || n != 1 {
		t.Skip("the DEL was not answered 1")
	}
	time.Sleep(time.Until(set.Add(400 * time.Millisecond))) // A's lock lapsed on D, E
	for _, i := range []int{0, 1} {
		e.toxicOn(0, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	granted := time.Now()
	if ok, err := c[0].SetNX(ctx, key, "B", 2900*time.Millisecond).Result(); err != nil || !ok {
		t.Skipf("B (C, D, E) = %v, %v", ok, err)
	}
	t.Logf("B granted by C, D, E, %v after the DEL was sent", granted.Sub(delSent).Round(time.Millisecond))
	time.Sleep(time.Until(delSent.Add(1800 * time.Millisecond))) // the DEL's copies landed on D, E
	lateNoSecondHolder(t, e, addrs, c[1], key, granted, "the DEL's late copies deleted B's lock")
}

// TestLateOverwriteNeverReachesALaterGrant: as
// TestLateDelNeverWipesALaterGrant for SET XX PX (an overwrite whoever
// holds the lock: ShedLock's): A holds the lock (300 ms); SET k A2 XX PX
// 1000 through replica 1, whose links to D, E are 2 s slow, is answered
// OK by A, B, C; A2 lapses; B is granted (2.9 s) by C, D, E through
// replica 0 (its links to A, B drop what is sent); the overwrite's
// copies then land on D, E. A single round overwrote B's lock there with
// A2 for 1 s, and once that lapsed C was granted by A, B, D, E inside B's
// window: two holders.
func TestLateOverwriteNeverReachesALaterGrant(t *testing.T) {
	sleepBound(t)
	e, addrs, c := lateReplicas(t)
	ctx, key := context.Background(), "lateset:k"
	for _, cl := range c { // links opened, the scripts loaded on every backend
		_ = cl.SetNX(ctx, "lateset:other", "x", time.Second).Err()
		_ = cl.SetXX(ctx, "lateset:other", "y", time.Second).Err()
	}
	lateFirstHolder(t, c[0], key)
	for _, i := range []int{3, 4} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":2000}`)
	}
	sent := time.Now()
	ok, err := c[1].SetXX(ctx, key, "A2", time.Second).Result()
	t.Logf("SET XX through replica 1 (D, E 2 s slow) = %v, %v, after %v", ok, err, time.Since(sent).Round(time.Millisecond))
	if err != nil || !ok {
		t.Skip("the overwrite was not answered OK")
	}
	for _, i := range []int{0, 1} {
		e.toxicOn(0, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	var granted time.Time
	for time.Since(sent) < 1900*time.Millisecond { // A2 lapses on A, B, C within ~1.2 s
		if ok, err := c[0].SetNX(ctx, key, "B", 2900*time.Millisecond).Result(); err == nil && ok {
			granted = time.Now()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if granted.IsZero() {
		t.Skip("B was not granted by C, D, E before the overwrite's copies landed")
	}
	t.Logf("B granted by C, D, E, %v after the overwrite was sent", granted.Sub(sent).Round(time.Millisecond))
	time.Sleep(time.Until(sent.Add(2700 * time.Millisecond))) // the overwrite's copies landed on D, E
	lateNoSecondHolder(t, e, addrs, c[1], key, granted, "the overwrite's late copies replaced B's lock")
}

// lateReplicas is a fault environment's two replicas and a client of
// each, each of whose links to the backends has carried a DEL.
func lateReplicas(t *testing.T) (*faultEnv, [2]string, [2]*redis.Client) {
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	var c [2]*redis.Client
	for i, addr := range addrs {
		c[i] = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { c[i].Close() })
		if err := c[i].Del(context.Background(), "late:warm").Err(); err != nil { // links opened, DEL's scripts loaded on every backend
			t.Fatal(err)
		}
	}
	return e, addrs, c
}

// lateNoSecondHolder clears the toxics, then tries C's SET NX of key
// through c until 2.7 s after B's grant (its lease 2.9 s): granted, it
// fails the test, saying why.
func lateNoSecondHolder(t *testing.T, e *faultEnv, addrs [2]string, c *redis.Client, key string, granted time.Time, why string) {
	t.Helper()
	e.clearToxics()
	waitUsable(t, addrs[0])
	waitUsable(t, addrs[1])
	for time.Since(granted) < 2700*time.Millisecond {
		if ok, err := c.SetNX(context.Background(), key, "C", time.Second).Result(); err == nil && ok {
			t.Fatalf("C granted %v into B's 2.9 s window: %s, granted after the reply", time.Since(granted).Round(time.Millisecond), why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lateFirstHolder has A take key for 300 ms through c, trying again where
// a loaded machine spent the short lease's validity; it answers when.
func lateFirstHolder(t *testing.T, c *redis.Client, key string) time.Time {
	t.Helper()
	for try := 0; ; try++ {
		set := time.Now()
		ok, err := c.SetNX(context.Background(), key, "A", 300*time.Millisecond).Result()
		switch {
		case err == nil && ok:
			return set
		case try == 5:
			t.Fatalf("A = %v, %v", ok, err)
		}
		t.Logf("A = %v, %v: again", ok, err)
		time.Sleep(400 * time.Millisecond)
	}
}

// TestLateDelBetweenRoundsNeverWipesALaterGrant: as
// TestLateDelNeverWipesALaterGrant, but D's and E's links slow down after
// the DEL's first round (the read) was answered, so its second round (the
// delete) is what lands late, on links that stay open: the delete finds
// B's lock there, which does not print as the lock it read, and leaves
// it. (With the links slow from the start, the read times out, the links
// are dropped and dialled again, and the delete may never be sent.)
func TestLateDelBetweenRoundsNeverWipesALaterGrant(t *testing.T) {
	sleepBound(t)
	e, addrs, c := lateReplicas(t)
	ctx, key := context.Background(), "latedel2:k"
	set := lateFirstHolder(t, c[0], key)
	evals := func() int64 { // the scripts backend D ran
		stats := e.redis[3].Client().Info(ctx, "commandstats").Val()
		_, rest, _ := strings.Cut(stats, "cmdstat_evalsha:calls=")
		n, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
		return n
	}
	before := evals()
	e.toxicOn(1, 4, "slowanswer", "latency", "downstream", 1, `{"latency":150}`) // the read lasts 150 ms
	delSent := time.Now()
	type reply struct {
		n   int64
		err error
	}
	done := make(chan reply, 1)
	go func() { n, err := c[1].Del(ctx, key).Result(); done <- reply{n, err} }()
	time.Sleep(60 * time.Millisecond)
	for _, i := range []int{3, 4} {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":1000}`)
	}
	r := <-done
	t.Logf("DEL through replica 1 = %v, %v, after %v", r.n, r.err, time.Since(delSent).Round(time.Millisecond))
	if r.err != nil || r.n != 1 {
		t.Skip("the DEL was not answered 1")
	}
	time.Sleep(time.Until(set.Add(400 * time.Millisecond))) // A's lock lapsed on D, E
	for _, i := range []int{0, 1} {
		e.toxicOn(0, i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
	}
	granted := time.Now()
	if ok, err := c[0].SetNX(ctx, key, "B", 2900*time.Millisecond).Result(); err != nil || !ok {
		t.Skipf("B (C, D, E) = %v, %v", ok, err)
	}
	time.Sleep(time.Until(delSent.Add(1500 * time.Millisecond))) // the delete landed on D, E
	ran := evals() - before
	v, _ := e.redis[3].Client().Get(ctx, key).Result()
	t.Logf("B granted by C, D, E %v after the DEL was sent; then backend D ran %d scripts since the DEL (its read, its delete, B's grant) and holds %q",
		granted.Sub(delSent).Round(time.Millisecond), ran, v)
	if ran < 3 {
		t.Skip("the DEL's delete never reached D: nothing late to check")
	}
	if v != "B" {
		t.Fatalf("backend D holds %q after the DEL's late delete: B's lock, granted after the DEL was answered, was deleted there", v)
	}
	lateNoSecondHolder(t, e, addrs, c[1], key, granted, "the DEL's late delete deleted B's lock")
}
