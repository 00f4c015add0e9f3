package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// A tenant pipelining session locks by the ten thousand (limits off) does
// not cost another tenant its session locks: the renewer takes each user's
// locks nearest deadline first and the users in turns, each batch with its
// own deadline, so the honest tenant's locks are renewed in the first
// script each backend runs. Before, one renewal round renewed them all with
// one deadline set by the shortest TTL, and honest locks in later batches
// were lost.
func TestSessionFloodSparesOtherTenants(t *testing.T) {
	h, billing, search := noisyTenants(t, func(c *config.Config) {
		unlimitedSessions(c)
		// Nearer production's (250ms, 0.05) than the harness's: a renewal
		// script waits at most 300ms for a backend (a tenth of 3s).
		c.NodeTimeout, c.TimeoutFactor = 500*time.Millisecond, 0.1
	})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	var mu sync.Mutex
	taken := 0
	for conn := range 3 {
		c := billing()
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < 100; i++ {
				p := c.Pipeline()
				for j := range 500 {
					p.Do(ctx, "LOCK.ACQUIRE", fmt.Sprintf("billing:flood:%d:%d:%d", conn, i, j), "o", 3000, "SESSION")
				}
				cmds, _ := p.Exec(ctx)
				mu.Lock()
				for _, cmd := range cmds {
					if cmd.Err() == nil {
						taken++
					}
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(3 * time.Second) // the flood builds up
	honest := search()
	// The honest tenant's acquires wait in the backends' queues behind the
	// flood: on a loaded machine one may time out on a majority (NOQUORUM),
	// and a client asks again. What this test is about comes after: a
	// session lock once granted is never lost.
	for i := range 10 {
		var err error
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			err = honest.Do(ctx, "LOCK.ACQUIRE", fmt.Sprint("search:s", i), "honest", 3000, "SESSION").Err()
			if err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") || time.Now().After(end) {
				break
			}
			t.Logf("search:s%d: %v; again", i, err)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(9 * time.Second) // three TTLs of the honest locks
	mu.Lock()
	t.Logf("hostile session locks taken: %d", taken)
	mu.Unlock()
	info, _ := honest.Info(t.Context(), "redlock").Result()
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "session_") {
			t.Log(line)
		}
	}
	for i := range 10 {
		if n := h.Holders(fmt.Sprint("search:s", i), "honest"); n < 2 {
			t.Errorf("honest session lock search:s%d is held on %d of 3 backends after the flood ran; want a quorum (never lost)", i, n)
		}
	}
}

// unlimitedSessions lifts the session-lock limits: the flood test is about the renewer.
func unlimitedSessions(c *config.Config) {
	c.MaxSessionLocksPerClient, c.MaxSessionLocksPerUser = 0, 0
}
