package e2e

import (
	"regexp"
	"testing"
	"time"
)

// review108: every backend flushed at once (FLUSHALL on each) while lock a
// is held on all of them. The running replica quarantines them (its
// presence is gone). A replica started after the flush finds no marker on
// any backend, long uptimes, and takes them for a deployment to mark: it
// counts them at once and grants b while a's window is open.
func TestReview108TotalFlushNewReplicaGrantsASecondOwner(t *testing.T) {
	h := bootstrapped(t, 3, shortWindow(2*time.Second))
	ctx := t.Context()
	c := replicaAt(t, h.Addr)
	time.Sleep(3 * time.Second) // backends older than the window (about 2s)
	if ok, err := c.SetNX(ctx, "r108:k", "a", 2*time.Second).Result(); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	at := time.Now()
	for _, b := range h.Backend {
		if err := b.Client().FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the running replica's checks see the flush
	if info := c.Info(ctx, "redlock").Val(); !regexp.MustCompile("backend0:[^\n]*state=quarantined").MatchString(info) {
		t.Fatalf("the running replica did not quarantine the flushed backends:\n%s", info)
	}
	_, addr2 := h.Serve() // a replica started (or restarted) after the flush
	c2 := replicaAt(t, addr2)
	ok, err := c2.SetNX(ctx, "r108:k", "b", 2*time.Second).Result()
	asked := time.Since(at)
	t.Logf("b through the new replica %s after a's 2s grant: %v %v\nnew replica: %s\nold replica: %s", asked, ok, err,
		regexp.MustCompile("backend0:[^\n]*").FindString(c2.Info(ctx, "redlock").Val()),
		regexp.MustCompile("backend0:[^\n]*").FindString(c.Info(ctx, "redlock").Val()))
	if asked > 1800*time.Millisecond {
		t.Skip("too slow to say anything")
	}
	if ok {
		t.Fatalf("b granted %s after a's 2s grant, lost on every backend by the flush: two owners", asked)
	}
}
