package e2e

import (
	"context"
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
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	var c [2]*redis.Client
	for i, addr := range addrs {
		c[i] = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { c[i].Close() })
	}
	ctx, key := context.Background(), "latedel:k"
	for _, cl := range c { // links opened, the scripts loaded on every backend
		if err := cl.Del(ctx, "latedel:other").Err(); err != nil {
			t.Fatal(err)
		}
	}
	set := time.Now()
	if ok, err := c[0].SetNX(ctx, key, "A", 300*time.Millisecond).Result(); err != nil || !ok {
		t.Fatalf("A = %v, %v", ok, err)
	}
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
	e.clearToxics()
	waitUsable(t, addrs[0])
	waitUsable(t, addrs[1])
	for time.Since(granted) < 2700*time.Millisecond {
		ok, err := c[1].SetNX(ctx, key, "C", time.Second).Result()
		if err == nil && ok {
			t.Fatalf("C granted %v into B's 2.9 s window: the DEL's late copies deleted B's lock, granted after the DEL was answered",
				time.Since(granted).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	var c [2]*redis.Client
	for i, addr := range addrs {
		c[i] = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { c[i].Close() })
	}
	ctx, key := context.Background(), "lateset:k"
	for _, cl := range c { // links opened, the scripts loaded on every backend
		_ = cl.SetNX(ctx, "lateset:other", "x", time.Second).Err()
		_ = cl.SetXX(ctx, "lateset:other", "y", time.Second).Err()
	}
	if ok, err := c[0].SetNX(ctx, key, "A", 300*time.Millisecond).Result(); err != nil || !ok {
		t.Fatalf("A = %v, %v", ok, err)
	}
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
	e.clearToxics()
	waitUsable(t, addrs[0])
	waitUsable(t, addrs[1])
	for time.Since(granted) < 2700*time.Millisecond {
		ok, err := c[1].SetNX(ctx, key, "C", time.Second).Result()
		if err == nil && ok {
			t.Fatalf("C granted %v into B's 2.9 s window: the overwrite's late copies replaced B's lock, granted after the overwrite was answered",
				time.Since(granted).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
