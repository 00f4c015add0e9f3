package e2e

// Review 38c (adversarial): the settled-token re-attach,
// pending notes that yield on reads, and restores that write a token.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestReview38cOutbidReattachToken: fenced acquires of other keys through
// both replicas make a key's fenced acquire often outbid (its first raise
// notes one token, its second another); the owner's re-attaches race it
// through the other replica. The acquire and every re-attach must answer
// one token, and it must be no other grant's.
func TestReview38cOutbidReattachToken(t *testing.T) {
	sleepBound(t)
	review38cOutbid(t, true, false)
}

// TestReview38cFirstTokenRacingReattach: a plain SET NX PX lock gets its
// token at its first LOCK.TOKEN (a fix, "=T" beside the lock on Q holders)
// while its owner re-attaches it (pipelined LOCK.ACQUIRE ... SESSION)
// through replica 2. Every token answered for the lock (readers' and
// re-attaches') must be one, and LOCK.TOKEN with any two backends paused
// must answer it or nothing.
func TestReview38cFirstTokenRacingReattach(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) { c.SessionTick = 250 * time.Millisecond })
	ctx := t.Context()
	_, addr2 := h.Serve()
	a := oneConn(h)
	b := h.Client(func(o *redis.Options) { o.Addr, o.PoolSize = addr2, 1 })
	rd := oneConn(h)
	r1 := oneConn(h)
	deadline := time.Now().Add(40 * time.Second)
	bad := 0
	for i := 0; time.Now().Before(deadline) && i < 150; i++ {
		key := fmt.Sprintf("review38c:fix:%d", i)
		if ok, err := a.SetNX(ctx, key, "tokA", 3*time.Second).Result(); err != nil || !ok {
			t.Fatalf("SET NX = %v, %v", ok, err)
		}
		var mu sync.Mutex
		seen := map[string]map[int64]int{"reattach": {}, "read": {}}
		rec := func(who string, n int64) { mu.Lock(); seen[who][n]++; mu.Unlock() }
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(time.Duration(i%9) * 100 * time.Microsecond)
			p := b.Pipeline()
			cmds := make([]*redis.Cmd, 6)
			for j := range cmds {
				cmds[j] = p.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 3000, "SESSION")
			}
			_, _ = p.Exec(ctx)
			for _, c := range cmds {
				if n, err := c.Int64(); err == nil {
					rec("reattach", n)
				}
			}
		})
		wg.Go(func() {
			for range 4 {
				if n, err := rd.Do(ctx, "LOCK.TOKEN", key).Int64(); err == nil && n > 0 {
					rec("read", n)
				}
			}
		})
		wg.Wait()
		all := map[int64]bool{}
		for _, m := range seen {
			for n := range m {
				all[n] = true
			}
		}
		var after []string
		for p := range 5 {
			q := (p + 1) % 5
			h.Backend[p].Pause()
			h.Backend[q].Pause()
			n, err := r1.Do(ctx, "LOCK.TOKEN", key).Int64()
			h.Backend[p].Resume()
			h.Backend[q].Resume()
			if err == nil && n > 0 {
				all[n] = true
			}
			after = append(after, fmt.Sprintf("%d,%d paused: %d %v", p, q, n, err))
		}
		if len(all) > 1 {
			bad++
			t.Errorf("%s: several tokens for one lock: %v; LOCK.TOKEN with two backends paused: %q (notes %q)", key, seen, after, review38Notes(h, key))
			if bad >= 2 {
				break
			}
		}
		_, _ = r1.Do(ctx, "LOCK.RELEASE", key, "tokA").Result()
	}
}

// TestReview38cPendingYieldsToStaleToken: a fenced SESSION lock answered
// token T. One holder, backend 4, keeps the token of the acquire's first,
// outbid raise, T1 < T (simulated: its second raise's script was lost on
// a reset connection; model/tokens.pml's SCEN_READ shows the two raises).
// Backends 0 and 1 restart empty, one after the other: each renewal's
// holders split (T on some, T1 on backend 4), so each restore notes "no
// token yet". Then with backends 2 and 3 paused (a minority), LOCK.TOKEN
// reads two such holders and backend 4's T1. It answered T1 when a read
// took the largest token any one holder noted: a second, smaller token for
// the lock whose holder was told T. A token is answered only when Q
// holders note it now.
func TestReview38cPendingYieldsToStaleToken(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, func(c *config.Config) { c.SessionTick = 250 * time.Millisecond })
	ctx := t.Context()
	const key = "review38c:stale"
	a := oneConn(h)
	r := oneConn(h)
	tok, err := a.Do(ctx, "LOCK.ACQUIRE", key, "tokA", 3000, "SESSION").Int64()
	if err != nil || tok <= 0 {
		t.Fatalf("LOCK.ACQUIRE SESSION = %d, %v", tok, err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "tokA") == 5 })
	c4 := h.Backend[4].Client()
	n := c4.Get(ctx, quorum.MetaKey(key)).Val()
	suffix := " " + fmt.Sprint(tok)
	if !strings.HasSuffix(n, suffix) {
		t.Fatalf("backend 4 note %q; want token %d", n, tok)
	}
	c4.Set(ctx, quorum.MetaKey(key), strings.TrimSuffix(n, suffix)+" "+fmt.Sprint(tok-2), redis.KeepTTL)
	for _, i := range []int{0, 1} {
		h.Backend[i].Restart() // empty
		harness.Eventually(t, "the renewal restores the lock", func() bool { return h.Holders(key, "tokA") == 5 })
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("token %d; notes after the restores %q", tok, review38Notes(h, key))
	if got, err := r.Do(ctx, "LOCK.TOKEN", key).Int64(); err != nil || got != tok {
		t.Logf("LOCK.TOKEN with every backend up = %d, %v", got, err)
	}
	h.Backend[2].Pause()
	h.Backend[3].Pause()
	got, gerr := r.Do(ctx, "LOCK.TOKEN", key).Int64()
	h.Backend[2].Resume()
	h.Backend[3].Resume()
	if gerr == nil && got > 0 && got != tok {
		t.Fatalf("the holder was answered token %d; LOCK.TOKEN with backends 2, 3 paused answers %d (notes %q)", tok, got, review38Notes(h, key))
	}
	t.Logf("LOCK.TOKEN with 2, 3 paused = %d, %v", got, gerr)
}
