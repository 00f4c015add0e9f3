package backend

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestRWLockAgainstRedis (rwlock.lua): a read-write lock on one node.
// Readers share it and a writer is refused; each reader's hold ends at its
// own time, and the hash lives as long as the last one; the last reader's
// unlock frees it for a writer, who then excludes readers but its own
// thread's; a writer's last unlock leaves its thread's read; a plain hash
// lock's name is not a read-write lock's; force release goes by mode. A
// holder that left keeps its end in the holders set, for a repair, and no
// longer.
func TestRWLockAgainstRedis(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const key = "rw"
	acquire := func(owner, mode string, ttl time.Duration) quorum.Reply {
		return do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: owner, TTL: ttl, Round: "r", Mode: mode})
	}
	release := func(owner, mode string) quorum.Reply {
		return do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: owner, Mode: mode, Mark: "m"})
	}
	if r := acquire("a:1", "read", 300*time.Millisecond); !r.OK {
		t.Fatalf("first read = %+v", r)
	}
	if r := acquire("b:1", "read", 5*time.Second); !r.OK {
		t.Fatalf("second read = %+v; readers share", r)
	}
	if r := acquire("c:1:write", "write", 5*time.Second); r.OK || r.N <= 0 {
		t.Fatalf("write beside readers = %+v; want refused with the PTTL", r)
	}
	if ttl := c.PTTL(ctx, key).Val(); ttl < 4*time.Second {
		t.Fatalf("PTTL %v; want the longest reader's", ttl)
	}
	time.Sleep(400 * time.Millisecond) // a:1's window ends
	if r := release("a:1", "read"); r.N != -1 {
		t.Fatalf("unlock by a reader whose window ended = %+v; want -1 (not its lock any more)", r)
	}
	if r := release("b:1", "read"); r.N != 1 || r.Others {
		t.Fatalf("last reader's unlock = %+v; want released, no other holder", r)
	}
	if c.Exists(ctx, key).Val() != 0 {
		t.Fatal("the hash outlived the last holder")
	}
	if ttl := c.PTTL(ctx, quorum.HoldersKey(key)).Val(); ttl > 5*time.Second {
		t.Fatalf("the holders' ends live %v after the last holder left; want at most its own end's", ttl)
	}
	if r := acquire("c:1", "write", 5*time.Second); r.OK {
		t.Fatal("a writer not named <thread>:write was granted (its mode would read as read)")
	}
	if r := acquire("c:1:write", "write", 5*time.Second); !r.OK {
		t.Fatalf("write of a free lock = %+v", r)
	}
	if r := acquire("d:1", "read", 5*time.Second); r.OK {
		t.Fatal("another thread's read beside a writer was granted")
	}
	if r := acquire("c:1", "read", 5*time.Second); !r.OK {
		t.Fatalf("the writer's own thread's read = %+v", r)
	}
	if r := release("c:1:write", "write"); r.N != 1 || !r.Others {
		t.Fatalf("the writer's unlock = %+v; want released, its thread's read keeping the lock", r)
	}
	if mode := c.HGet(ctx, key, "mode").Val(); mode != "read" {
		t.Fatalf("mode %q after the writer left its thread reading; want read", mode)
	}
	if r := acquire("d:1", "read", 5*time.Second); !r.OK {
		t.Fatalf("another reader beside the former writer's read = %+v", r)
	}
	if r := forceDel(t, n, key, "write"); r.OK {
		t.Fatal("forceUnlock of the write lock deleted a read lock")
	}
	if r := forceDel(t, n, key, "read"); !r.OK || c.Exists(ctx, key, quorum.HoldersKey(key)).Val() != 0 {
		t.Fatalf("forceUnlock of the read lock = %+v, or it left the hash or its holders", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "plain", Value: "e:1", TTL: 5 * time.Second, Round: "r"}); !r.OK {
		t.Fatalf("plain hash lock = %+v", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: "plain", Value: "f:1", TTL: 5 * time.Second, Round: "r", Mode: "read"}); r.OK {
		t.Fatal("a read of a plain hash lock was granted")
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: "plain", Value: "e:1", Mode: "read", Mark: "m"}); r.N != -1 {
		t.Fatalf("a read unlock of a plain hash lock = %+v; want -1, the lock left alone", r)
	}
}

// TestRWLockDelayOfOneReader (rwlock.lua): with a lock-delay, a reader
// whose window ends unreleased while another reads keeps its delay: no
// new holder enters until it ends, and the other reader's unlock, the
// last, leaves the note until then instead of marking it.
func TestRWLockDelayOfOneReader(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const key, delay = "rwd", 3 * time.Second
	acquire := func(owner, mode string, ttl time.Duration) quorum.Reply {
		return do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: owner, TTL: ttl, Round: "r", Mode: mode, AuxTTL: delay})
	}
	if r := acquire("a:1", "read", 200*time.Millisecond); !r.OK {
		t.Fatalf("short read = %+v", r)
	}
	if r := acquire("b:1", "read", 10*time.Second); !r.OK {
		t.Fatalf("long read = %+v", r)
	}
	time.Sleep(300 * time.Millisecond) // a:1's window ends unreleased
	if r := acquire("c:1", "read", 10*time.Second); r.OK || r.N <= 0 || r.N > delay.Milliseconds() {
		t.Fatalf("a new reader inside a:1's lock-delay = %+v; want refused with the delay left", r)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashRelease, Key: key, Value: "b:1", Mode: "read", Mark: "m"}); r.N != 1 || r.Noted {
		t.Fatalf("the last reader's unlock = %+v; want released, the note not marked", r)
	}
	if r := acquire("w:1:write", "write", 10*time.Second); r.OK {
		t.Fatal("a writer inside a:1's lock-delay was granted")
	}
	if ttl := c.PTTL(ctx, quorum.MetaKey(key)).Val(); ttl < 2*time.Second || ttl > delay {
		t.Fatalf("note PTTL %v; want a:1's delay's rest", ttl)
	}
}

// TestRWRenewalSetsOnlyItsHoldersWindow (hashextend.lua, rwlock.lua): a
// reader's watchdog renewal sets its own window and no other reader's (on
// one Redis, Redisson's renewal sets the hash's TTL: every reader's); the
// hash lives as long as the longest; a renewal by a thread that holds
// nothing changes nothing.
func TestRWRenewalSetsOnlyItsHoldersWindow(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()
	const key = "rw-renew"
	for _, owner := range []string{"a:1", "b:1"} {
		if r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: key, Value: owner, TTL: 5 * time.Second, Round: "r", Mode: "read"}); !r.OK {
			t.Fatalf("read by %s = %+v", owner, r)
		}
	}
	ends := func() (a, b float64) {
		a, _ = c.ZScore(ctx, quorum.HoldersKey(key), "a:1").Result()
		b, _ = c.ZScore(ctx, quorum.HoldersKey(key), "b:1").Result()
		return a, b
	}
	a0, b0 := ends()
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashExtend, Key: key, Value: "b:1", TTL: 30 * time.Second}); !r.OK {
		t.Fatalf("b's renewal = %+v", r)
	}
	a1, b1 := ends()
	if a1 != a0 {
		t.Fatalf("a's end moved from %.0f to %.0f on b's renewal", a0, a1)
	}
	if b1-b0 < 24000 {
		t.Fatalf("b's end moved %.0f ms; want about 25000 (30 s from now, not 5)", b1-b0)
	}
	if ttl := c.PTTL(ctx, key).Val(); ttl < 29*time.Second {
		t.Fatalf("the hash's PTTL %v; want the longest window's, about 30 s", ttl)
	}
	if r := do(t, n, quorum.Op{Kind: quorum.OpHashExtend, Key: key, Value: "c:1", TTL: time.Minute}); r.OK {
		t.Fatalf("a renewal by a thread that holds nothing = %+v", r)
	}
	if a2, b2 := ends(); a2 != a1 || b2 != b1 || c.ZScore(ctx, quorum.HoldersKey(key), "c:1").Err() == nil {
		t.Fatal("a renewal by a thread that holds nothing changed the holders' ends")
	}
}
