package e2e

// Second adversarial review of the RReadWriteLock change (afe36ac..f47e767):
// each test here fails on f47e767 and shows one break.

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

const (
	rwForceRead  = "27dbe744e95c1d854a7f556cc6817030de2d0d01" // readLock().forceUnlock
	rwForceWrite = "2e2cb2a3b13e2e80e4236ef6a25beaf365dba608" // writeLock().forceUnlock
)

// rwForce sends Redisson 3.52's readLock() or writeLock() forceUnlock.
func rwForce(t *testing.T, c *redis.Client, name string, write bool) (int64, error) {
	t.Helper()
	const f = "redisson-3.52.0-rwlock.jsonl"
	sha := rwForceRead
	if write {
		sha = rwForceWrite
	}
	return c.Eval(t.Context(), recordedScript(t, f, sha), []string{name, "redisson_rwlock:{" + name + "}"}, 0, "PUBLISH").Int64()
}

// TestRWMultiLockLeaseStretchesAnExpiredReadersLockDelay: with lock_delay,
// reader R1 expires unreleased while reader R2 holds the lock: R1's
// lock-delay is kept in the holders set as the member "mode" (RW.pending),
// ending R1's end + delay. A RedissonMultiLock lease on the lock (any
// client's, force release off: "never shorter") runs ZADD GT over every
// member of the holders set, "mode" included: the lock-delay becomes the
// lease. R2 then unlocks (released on a quorum: the lock should be free
// once R1's delay is over), but rwFree keeps the note until the stretched
// "mode" end: a writer is refused for the lease's length after the lock
// was released and R1's delay ended. Without the lease (control) the writer
// is granted at that time.
func TestRWMultiLockLeaseStretchesAnExpiredReadersLockDelay(t *testing.T) {
	sleepBound(t)
	const delay = 2 * time.Second
	h := harness.New(t, 3, func(c *config.Config) { c.LockDelay = delay; c.AllowForceRelease = false })
	c := h.Client()
	s := loadRWScripts(t)
	for _, lease := range []bool{false, true} {
		name := fmt.Sprintf("rw:{lease-delay-%v}", lease)
		r1 := &rwClient{c: c, s: s, name: name, owner: "uuid-1:1"}
		r2 := &rwClient{c: c, s: s, name: name, owner: "uuid-2:2"}
		if ok, err := r1.lock(t, false, 1000); !ok || err != nil {
			t.Fatal("r1 refused", err)
		}
		r1End := time.Now().Add(time.Second)
		if ok, err := r2.lock(t, false, 30000); !ok || err != nil {
			t.Fatal("r2 refused", err)
		}
		time.Sleep(time.Until(r1End) + 300*time.Millisecond) // r1 expired unreleased: its delay runs
		if lease {
			// RedissonMultiLock's lease (R2 took the lock as a member of a MultiLock with a 25 s lease)
			if n, err := c.Do(t.Context(), "evalsha", redissonMultiLease, 1, name, 25000, "").Int64(); err != nil || n != 1 {
				t.Fatalf("lease = %d, %v", n, err)
			}
		}
		if v, err := r2.unlock(t, false, 30000); err != nil || v != int64(1) {
			t.Fatalf("r2's unlock = %v, %v; want 1 (the lock is free but for r1's lock-delay)", v, err)
		}
		released := time.Now()
		time.Sleep(time.Until(r1End.Add(delay)) + 500*time.Millisecond) // r1's lock-delay is over
		granted := false
		for range 3 { // robust to load: a few tries, a second apart
			if granted = rwTry(t, c, s, name, "uuid-3:3:write", true, 5000); granted {
				break
			}
			time.Sleep(time.Second)
		}
		if !granted {
			ends := rwEnds(t, h, name, "mode")
			t.Errorf("lease %v: a writer was refused %v after the last holder released the lock and %v after r1's lock-delay ended; the holders set's \"mode\" (lock-delay) ends in %v ms on each backend",
				lease, time.Since(released).Round(time.Millisecond), time.Since(r1End.Add(delay)).Round(time.Millisecond), ends)
		}
	}
}

// TestRWWriteForceUnlockOfALockWhoseWriterExpired: writer T:write (1 s lease)
// and its own thread T reading (30 s) hold the lock; the writer expires
// unreleased (its client crashed), so by the proxy's own rules the lock is
// read now (rwSettle: "makes a lock whose writer is gone read"): T's read
// holds it for 30 s. An operator's writeLock().forceUnlock — Redisson's
// script deletes the lock only where it is written — is answered by
// del.lua, which checks the mode field without settling: it still says
// "write" on every node, so the lock goes, T's live read with it, and
// another thread's writer is granted inside T's read window. (And
// readLock().forceUnlock of that read lock answers 0, deleting nothing.)
func TestRWWriteForceUnlockOfALockWhoseWriterExpired(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, nil)
	c := h.Client()
	s := loadRWScripts(t)
	for _, readFirst := range []bool{true, false} {
		name := fmt.Sprintf("rw:{force-expired-%v}", readFirst)
		const thread = "uuid-t:1"
		if !rwTry(t, c, s, name, thread+":write", true, 1000) {
			t.Fatal("write refused")
		}
		if !rwTry(t, c, s, name, thread, false, 30000) {
			t.Fatal("the writer's thread's read refused")
		}
		readEnd := time.Now().Add(30 * time.Second)
		time.Sleep(1500 * time.Millisecond) // the writer expired, unreleased; its thread still reads
		if readFirst {
			// readLock().forceUnlock of a lock that is read (its writer gone)
			n, err := rwForce(t, c, name, false)
			t.Logf("readLock().forceUnlock of the read lock (writer expired) = %d, %v", n, err)
			if n != 1 {
				t.Errorf("readLock().forceUnlock of a lock only read (its writer expired) = %d, %v; want 1", n, err)
			}
			continue
		}
		n, err := rwForce(t, c, name, true)
		t.Logf("writeLock().forceUnlock of the read lock (writer expired) = %d, %v", n, err)
		if rwTry(t, c, s, name, "uuid-o:2:write", true, 5000) && time.Now().Before(readEnd) {
			t.Errorf("writeLock().forceUnlock (= %d) deleted a lock only read (its writer expired, its thread's read live for %v more), and another writer was granted inside that read",
				n, time.Until(readEnd).Round(time.Millisecond))
		}
	}
}
