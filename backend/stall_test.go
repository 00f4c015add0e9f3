package backend

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestStalledServerKeepsEachLeadExact: a lock's note outlives its key by
// the lock's lock-delay exactly, however long the server stalls inside a
// script. Redis 7.0 reads the clock for each command a script runs, so a
// note set "PX ttl+delay" a command after its key "PX ttl" (or set again
// "PX" its PTTL read a command before) outlives the key by the stall too:
// on a busy machine a lock without a lock-delay got one, and its release
// marked it (1 of 3000 releases in a CI run). Here the server is stopped
// (SIGSTOP) for 6 ms at a time while locks with a lock-delay of 0 and of
// 10 ms are acquired (plain and fenced, whose token the raise notes),
// overwritten (SET XX, another value), restored by a renewal, and released
// through a pin (undo.lua); after each, PEXPIRETIME(note) - PEXPIRETIME(key)
// must be the delay.
func TestStalledServerKeepsEachLeadExact(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n := newNode(t, s)
	c := s.Client()
	defer c.Close()
	ctx := t.Context()

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			s.Pause()
			time.Sleep(6 * time.Millisecond)
			s.Resume()
			time.Sleep(time.Duration(i%4) * 300 * time.Microsecond)
		}
	})
	defer func() { close(done); wg.Wait(); s.Resume() }()

	lead := func(key string) int64 {
		at := c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
		return c.Do(ctx, "PEXPIRETIME", quorum.MetaKey(key)).Val().(int64) - at
	}
	check := func(i int, what, key string, delay time.Duration) {
		t.Helper()
		if l := lead(key); l != delay.Milliseconds() {
			t.Fatalf("op %d, %s: the note outlives the key by %d ms; want the lock-delay, %d ms", i, what, l, delay.Milliseconds())
		}
	}
	const ttl, pad = 10 * time.Second, 10 * time.Millisecond
	deadline := time.Now().Add(4 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		delay := time.Duration(i%2) * 10 * time.Millisecond
		key, round := fmt.Sprintf("s%d", i), fmt.Sprintf("r%d", i)
		switch i % 4 {
		case 0, 1: // a plain lock, overwritten by a SET XX of another value, then restored
			if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: ttl, Round: round, Pad: pad, AuxTTL: delay}); !r.OK {
				t.Fatalf("op %d: SetNX = %+v", i, r)
			}
			check(i, "acquire", key, delay)
			if r := doFenced(t, n, quorum.Op{Kind: quorum.OpSetXX, Key: key, Value: "w", TTL: ttl, Round: round, Pad: pad}); !r.OK {
				t.Fatalf("op %d: SetXX = %+v", i, r)
			}
			check(i, "SET XX of another value", key, 0)
			c.Del(ctx, key, quorum.MetaKey(key))
			leases := []quorum.Lease{{Key: key, Value: "w", TTL: ttl, Pad: pad}}
			if r := do(t, n, quorum.Op{Kind: quorum.OpRenew, Leases: &leases, N: 1}); r.Err != nil || c.Exists(ctx, key).Val() != 1 {
				t.Fatalf("op %d: restore = %+v", i, r)
			}
			check(i, "restore", key, 0)
		case 2, 3: // a fenced lock: its token noted, then a pinned rollback
			ctr := "ctr" + key
			if r := do(t, n, quorum.Op{Kind: quorum.OpSetNX, Key: key, Value: "v", TTL: ttl, Round: round, Pad: pad, AuxTTL: delay, Aux: ctr}); !r.OK {
				t.Fatalf("op %d: fenced SetNX = %+v", i, r)
			}
			check(i, "fenced acquire", key, delay)
			if r := do(t, n, quorum.Op{Kind: quorum.OpRaise, Key: ctr, N: 7, Round: round, Aux: key, Value: "v"}); !r.OK || !r.Noted {
				t.Fatalf("op %d: raise = %+v", i, r)
			}
			check(i, "raise", key, delay)
			c.Set(ctx, quorum.PinKey(key), "v", ttl)
			if r := do(t, n, quorum.Op{Kind: quorum.OpUndo, Key: key, Value: "v", Round: round}); r.OK {
				t.Fatalf("op %d: a pinned rollback = %+v; want the lock kept", i, r)
			}
			check(i, "pinned rollback", key, delay)
		}
	}
}
