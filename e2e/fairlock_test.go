package e2e

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Redisson 3.52's RFairLock scripts, from its recorded session.
const (
	fairLockSHA   = "8f6ed299ffd259f0539c20f89253998c0777ea75"
	fairTrySHA    = "d20501c26a30adf6fb0fe9883bbbcc497e6157e2"
	fairUnlockSHA = "367f80bd2e300e411fb0936d9b601e5bcb3fd4b6"
	fairLeaveSHA  = "d1ddef65ad80886b5d36e023c99930044ddd653a"
)

// fairClient sends one Redisson thread's RFairLock calls, as its scripts
// lay out their keys and arguments, and waits as Redisson's lock() does:
// subscribed to its own channel, it tries again when woken or when the
// wait it was told ends.
type fairClient struct {
	c           *redis.Client
	name, owner string
	waitMS      int64 // the thread wait time: how long its place outlives each wait
	latchMS     int64 // the unlock latch's TTL (0: Redisson's 10 s)
	n           int
	lastSent    time.Time // when lock's last try was sent: a grant's window starts there
}

func (f *fairClient) keys() []string {
	return []string{f.name, redissonName("redisson_lock_queue", f.name), redissonName("redisson_lock_timeout", f.name)}
}

func (f *fairClient) channel() string { return redissonName("redisson_lock__channel", f.name) }

// redissonName is a name Redisson derives from a lock's (prefixName):
// "<prefix>:{<name>}", or "<prefix>:<name>" when the name has braces.
func redissonName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// try sends lock(): nil when held, else the wait it was told.
func (f *fairClient) try(t testing.TB, lease int64) (held bool, wait time.Duration, err error) {
	v, err := f.c.Eval(t.Context(), clientScript(t, fairLockSHA), f.keys(), lease, f.owner, f.waitMS, time.Now().UnixMilli()).Int64()
	if errors.Is(err, redis.Nil) {
		return true, 0, nil
	}
	return false, time.Duration(v) * time.Millisecond, err
}

// tryNow sends tryLock() without a wait: never queued.
func (f *fairClient) tryNow(t testing.TB, lease int64) (bool, error) {
	err := f.c.Eval(t.Context(), clientScript(t, fairTrySHA), f.keys(), lease, f.owner, time.Now().UnixMilli(), f.waitMS).Err()
	if errors.Is(err, redis.Nil) {
		return true, nil
	}
	return false, err
}

// lock waits for the lock until within, as Redisson's lock() does; joined,
// when given, is told once the first try was refused (the waiter queued).
func (f *fairClient) lock(t testing.TB, lease int64, within time.Duration, joined func()) (bool, error) {
	sub := f.c.Subscribe(t.Context(), f.channel()+":"+f.owner)
	defer sub.Close()
	if _, err := sub.Receive(t.Context()); err != nil {
		return false, err
	}
	deadline := time.Now().Add(within)
	for first := true; ; first = false {
		f.lastSent = time.Now()
		held, wait, err := f.try(t, lease)
		if held || err != nil && !isNoQuorum(err) {
			return held, err
		}
		if first && joined != nil && err == nil {
			joined()
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		if err != nil {
			wait = 20 * time.Millisecond
		}
		select {
		case <-sub.Channel():
		case <-time.After(min(wait, time.Until(deadline))):
		}
	}
}

func (f *fairClient) unlock(t testing.TB, lease int64) (any, error) {
	f.n++
	latch := fmt.Sprintf("%s:%s-%d", redissonName("redisson_unlock_latch", f.name), f.owner, f.n)
	return f.c.Eval(t.Context(), clientScript(t, fairUnlockSHA), append(f.keys(), f.channel(), latch),
		0, lease, f.owner, time.Now().UnixMilli(), "PUBLISH", cmp.Or(f.latchMS, 10000)).Result()
}

// leave is acquireFailed: the waiter gives up its place.
func (f *fairClient) leave(t testing.TB) error {
	err := f.c.Eval(t.Context(), clientScript(t, fairLeaveSHA), f.keys()[1:], f.owner, f.waitMS).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// TestFairLockInArrivalOrder: waiters of one RFairLock through both
// replicas get it in the order they queued, each woken by its
// predecessor's unlock (not by the wait it was told: the holder's lease is
// 30 s); one that gives up leaves at once and wakes the next; one that
// stops trying (its client died) holds the others up only as long as its
// place outlives its last try (twice its thread wait time at most, here
// 1.5 s: the wait it is told is capped by it); a
// tryLock() without a wait never overtakes a queued waiter.
func TestFairLockInArrivalOrder(t *testing.T) {
	h := harness.New(t, 5, nil)
	_, second := h.Serve()
	clients := [2]*redis.Client{h.Client(), h.Client(func(o *redis.Options) { o.Addr = second })}
	const name, lease = "fair:{order}", 30000
	fc := func(i int, wait int64) *fairClient {
		return &fairClient{c: clients[i%2], name: name, owner: fmt.Sprintf("uuid-%d:%d", i%2, i), waitMS: wait}
	}
	holder := fc(100, 300000)
	if held, _, err := holder.try(t, lease); !held || err != nil {
		t.Fatalf("the first lock() = %v, %v", held, err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	const n = 6
	quitter, dead := 2, 4 // the third waiter gives up; the fifth stops trying
	got := make([]time.Time, n)
	for i := range n {
		f := fc(i, 300000)
		if i == dead {
			f.waitMS = 1500
			if held, _, err := f.try(t, lease); held || err != nil {
				t.Fatalf("the dead waiter's lock() = %v, %v", held, err)
			}
			continue // it never tries again
		}
		joined := make(chan struct{})
		within := 20 * time.Second
		if i == quitter {
			within = 800 * time.Millisecond
		}
		wg.Go(func() {
			held, err := f.lock(t, lease, within, func() { close(joined) })
			if i == quitter {
				if held || err != nil {
					t.Errorf("the waiter that gives up: %v, %v", held, err)
				}
				if err := f.leave(t); err != nil {
					t.Errorf("its acquireFailed: %v", err)
				}
				return
			}
			if !held || err != nil {
				t.Errorf("waiter %s: %v, %v", f.owner, held, err)
				return
			}
			mu.Lock()
			order, got[i] = append(order, f.owner), time.Now()
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			if v, err := f.unlock(t, lease); v != int64(1) || err != nil {
				t.Errorf("%s's unlock = %v, %v", f.owner, v, err)
			}
		})
		select {
		case <-joined:
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d never queued", i)
		}
	}
	if held, err := fc(99, 300000).tryNow(t, lease); held || err != nil {
		t.Fatalf("tryLock() while the holder holds it = %v, %v", held, err)
	}
	time.Sleep(time.Second) // the quitter gave up
	released := time.Now()
	if v, err := holder.unlock(t, lease); v != int64(1) || err != nil {
		t.Fatalf("the holder's unlock = %v, %v", v, err)
	}
	// While waiters queue, a tryLock() without a wait never takes it.
	for range 20 {
		if held, err := fc(98, 300000).tryNow(t, lease); held || err != nil {
			t.Fatalf("tryLock() overtook the queue: %v, %v", held, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	want := "uuid-0:0,uuid-1:1,uuid-1:3,uuid-1:5"
	if got := strings.Join(order, ","); got != want {
		t.Fatalf("granted in the order %s; want %s (the order they queued, without the one that gave up and the dead one)", got, want)
	}
	if d := got[0].Sub(released); d > time.Second {
		t.Errorf("the first waiter got it %v after the unlock; want it woken at once", d)
	}
	if d := got[1].Sub(got[0]); d > time.Second {
		t.Errorf("the second waiter got it %v after the first; want it woken by its unlock", d)
	}
	// The dead waiter's place, 3 s past its last try at most, held up the
	// one behind it: not 30 s (the holder's lease), not 300 s.
	if d := got[5].Sub(got[3]); d < 300*time.Millisecond || d > 6*time.Second {
		t.Errorf("the waiter behind the dead one got it %v after the one before; want its place to lapse in about 1.5 s", d)
	}
	if held, err := fc(97, 300000).tryNow(t, lease); !held || err != nil {
		t.Errorf("tryLock() of the free lock with nobody queued = %v, %v", held, err)
	}
}

// TestFairLockOfATenant: a tenant's fair lock names its queue and waiters'
// timeouts "redisson_lock_queue:{<lock>}" and "redisson_lock_timeout:{<lock>}",
// its waiters' channels "redisson_lock__channel:{<lock>}:<owner>": all the
// tenant's; another tenant's fair lock is refused.
func TestFairLockOfATenant(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.Users = labUsers })
	c := h.Client(func(o *redis.Options) { o.Username, o.Password = "billing", "b-pass" })
	a := &fairClient{c: c, name: "billing:fair", owner: "uuid-t:1", waitMS: 5000}
	b := &fairClient{c: c, name: "billing:fair", owner: "uuid-t:2", waitMS: 5000}
	if held, _, err := a.try(t, 5000); !held || err != nil {
		t.Fatalf("the tenant's fair lock = %v, %v", held, err)
	}
	done := make(chan error, 1)
	go func() {
		held, err := b.lock(t, 5000, 10*time.Second, nil)
		if err == nil && !held {
			err = errors.New("not granted")
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if v, err := a.unlock(t, 5000); v != int64(1) || err != nil {
		t.Fatalf("the tenant's unlock = %v, %v", v, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the tenant's waiter: %v", err)
	}
	other := &fairClient{c: c, name: "search:fair", owner: "uuid-t:1", waitMS: 5000}
	if _, _, err := other.try(t, 5000); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("another tenant's fair lock = %v; want NOPERM", err)
	}
}
