package e2e

import (
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// Review of issue 23 C: ShedLock keeps its lock with SET key value XX PX
// (the same value: its own lock, until lockAtLeastFor). A lock whose
// token was read (fixed by LOCK.TOKEN, or given by LOCK.ACQUIRE) keeps
// that token: one lock, one token. Before, the overwrite wrote a note
// without the token, and the next LOCK.TOKEN fixed a second one.
func TestOverwriteBySameValueKeepsTheToken(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.AllowForceRelease = true })
	c, ctx := h.Client(), t.Context()
	if ok, err := c.SetNX(ctx, "lock:xx", "shed", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("SET NX = %v, %v", ok, err)
	}
	first, err := c.Do(ctx, "LOCK.TOKEN", "lock:xx").Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetXX(ctx, "lock:xx", "shed", 30*time.Second).Err(); err != nil {
		t.Fatalf("SET XX: %v", err)
	}
	if again, err := c.Do(ctx, "LOCK.TOKEN", "lock:xx").Int64(); err != nil || again != first {
		t.Fatalf("LOCK.TOKEN after SET XX by the holder = %d, %v; want the lock's token %d", again, err, first)
	}

	tok, err := c.Do(ctx, "LOCK.ACQUIRE", "lock:xx2", "shed", 30000).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetXX(ctx, "lock:xx2", "shed", 30*time.Second).Err(); err != nil {
		t.Fatalf("SET XX: %v", err)
	}
	if again, err := c.Do(ctx, "LOCK.TOKEN", "lock:xx2").Int64(); err != nil || again != tok {
		t.Fatalf("LOCK.TOKEN after SET XX by the holder of a fenced lock = %d, %v; want its token %d", again, err, tok)
	}
}
