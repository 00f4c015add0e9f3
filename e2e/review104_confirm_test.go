package e2e

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// review104: a fenced SESSION lock granted in one round (backends 0 and 1
// counted up to its token T; backend 2, behind, noted its own counter
// "?T'" tentative). The grant's confirmation is lost on backend 2 (all
// three sends: its link was cut for a few node waits). doc.go: "a
// confirmation lost on a few holders costs nothing", and the session's
// renewals carry the granted token and confirm it where a holder notes
// it tentative (TestRenewalConfirmsTheGrantedToken). Before 62b4109 backend
// 2 noted the first raise's "?T" and a renewal made it final; now its
// "?T'" is another number, no renewal ever confirms it, and with one other
// backend unreachable (backend 0 paused) the lock, still held by Q=2
// backends and renewed, has no readable token and cannot be re-attached.
func TestReview104LostConfirmOnBehindHolderIsNeverHealed(t *testing.T) {
	for _, behind := range []bool{false, true} {
		name := "counters-equal(control)"
		if behind {
			name = "backend2-behind"
		}
		t.Run(name, func(t *testing.T) { review104LostConfirm(t, behind) })
	}
}

func review104LostConfirm(t *testing.T, behind bool) {
	sha := raiseSHA(t)
	key := "r104:lost"
	meta := quorum.MetaKey(key)
	var (
		drop      atomic.Bool
		holdAcq   atomic.Bool
		mu        sync.Mutex
		firsts    []string
		confirms2 int
	)
	hook := func(i int, args []string) []string {
		argv, ok := raiseOf(args, sha, meta)
		if !ok {
			if i == 2 && drop.Load() && len(args) > 4 && args[3] == key && holdAcq.CompareAndSwap(false, true) {
				// backend 2's acquire answers after 0's and 1's: the round
				// decides on them (it still runs here, within the node wait)
				time.Sleep(30 * time.Millisecond)
			}
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if len(argv) > 3 {
			firsts = append(firsts, argv[0]+argv[3])
			return nil
		}
		if i == 2 && drop.Load() {
			confirms2++
			return []string{"PING"} // lost: the link to backend 2 was cut
		}
		return nil
	}
	servers := redistest.Start(t, 3)
	rig := hookedRig(t, servers, hook, func(c *config.Config) {
		c.NodeTimeout, c.TimeoutFactor = 300*time.Millisecond, 0.5
		c.SessionTick = 250 * time.Millisecond
	})
	ctx := t.Context()
	if behind {
		// other keys' grants counted on backends 0 and 1 only
		for _, s := range servers[:2] {
			if err := s.Client().IncrBy(ctx, quorum.TokenKey, 7).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	drop.Store(true)
	tok, err := rig.acq.Do(ctx, "LOCK.ACQUIRE", key, "owner", 3000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1000 * time.Millisecond) // the confirmation's resends (3 sends, a node wait apart)
	drop.Store(false)
	time.Sleep(2500 * time.Millisecond) // session renewals (a third of the 3s TTL) carrying the granted token
	notes := rig.notes(key)
	mu.Lock()
	t.Logf("grant %d; first raises %v; confirmations dropped on backend 2: %d; notes after renewals %q", tok, firsts, confirms2, notes)
	mu.Unlock()
	// Backend 0 becomes unreachable: backends 1 and 2 (Q = 2) still hold
	// the lock, its session renews it.
	servers[0].Pause()
	defer servers[0].Resume()
	n, terr := rig.rd.Do(ctx, "LOCK.TOKEN", key).Int64()
	re, rerr := rig.rd.Do(ctx, "LOCK.ACQUIRE", key, "owner", 3000, "SESSION").Int64()
	t.Logf("backend 0 paused: LOCK.TOKEN = %d (%v); the holder's re-attach = %d (%v)", n, terr, re, rerr)
	if !strings.Contains(notes[2], " ") {
		t.Fatalf("backend 2 has no note: %q", notes)
	}
	if terr != nil || n != tok {
		t.Errorf("LOCK.TOKEN with one backend down = %d, %v; want %d (the lock is held and renewed on Q backends)", n, terr, tok)
	}
	if rerr != nil || re != tok {
		t.Errorf("the holder's re-attach with one backend down = %d, %v; want %d", re, rerr, tok)
	}
}
