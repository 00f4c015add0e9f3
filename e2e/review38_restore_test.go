package e2e

// Review 38 (adversarial): a renewal's restore keeps the lock's token.

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview38RestoreKeepsAFixedToken: a connection-bound SET NX lock gets
// its fencing token at its first LOCK.TOKEN (fixed "=T" beside it on the
// backends). One backend restarts empty; the session renewal restores the
// lock there (404bc8a), noted "<round> <pad> 0" as a fenced acquire's lock
// with no token yet (pexpireifeq.lua). The read then sees a "fenced" note
// on one holder, and the fenced kind wins over the fixed tokens the other
// four agree on (read.go majorityEntry: fixed tokens count only when no
// holder is fenced): LOCK.TOKEN answers nil for the rest of the lock's life,
// though one lock keeps one token.
func TestReview38RestoreKeepsAFixedToken(t *testing.T) {
	h := boundHarness(t)
	ctx := t.Context()
	const key = "review38:fixed"
	a := oneConn(h)
	if ok, err := a.SetNX(ctx, key, "tokA", 0).Result(); err != nil || !ok {
		t.Fatalf("SET NX = %v, %v", ok, err)
	}
	token, err := a.Do(ctx, "LOCK.TOKEN", key).Int64()
	if err != nil || token <= 0 {
		t.Fatalf("LOCK.TOKEN = %d, %v", token, err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "tokA") == 5 })
	h.Backend[0].Restart() // empty
	harness.Eventually(t, "the renewal restores the lock on the restarted backend", func() bool { return h.Holders(key, "tokA") == 5 })
	time.Sleep(2 * sessionTick)
	got, err := a.Do(ctx, "LOCK.TOKEN", key).Int64()
	if err != nil || got != token {
		t.Fatalf("LOCK.TOKEN after one backend restarted and the lock was restored there = %d, %v; want %d (notes %q)",
			got, err, token, review38Notes(h, key))
	}
}

// TestReview38RollingRestartKeepsTheSessionToken: a fenced session lock
// (LOCK.ACQUIRE ... SESSION answers token T, noted "<round> <pad> T") held
// while the three backends restart empty one after the other, each once
// the renewals restored the lock on the one before (a rolling upgrade of
// the backends, one at a time, never losing a quorum). Each restore notes
// token 0; once the last backend that noted T restarted, no holder notes T:
// LOCK.TOKEN answers nil and the holder's re-attach (a rolling upgrade of
// the replicas next) answers NOQUORUM "do not agree on its token yet" on
// every try, though every backend holds the lock for it.
func TestReview38RollingRestartKeepsTheSessionToken(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = sessionTick })
	_, addrB := h.Serve()
	ctx := t.Context()
	const key = "review38:rolling"
	a := oneConn(h)
	token, err := a.Do(ctx, "LOCK.ACQUIRE", key, "o", 3000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "o") == 3 })
	for i := range h.Backend {
		h.Backend[i].Restart() // empty
		harness.Eventually(t, fmt.Sprint("restored after backend ", i, " restarted"), func() bool { return h.Holders(key, "o") == 3 })
		time.Sleep(2 * sessionTick)
	}
	if got, err := a.Do(ctx, "LOCK.TOKEN", key).Int64(); err != nil || got != token {
		t.Errorf("LOCK.TOKEN after a rolling restart of the backends = %d, %v; want %d (notes %q)", got, err, token, review38Notes(h, key))
	}
	b := redis.NewClient(&redis.Options{Addr: addrB, PoolSize: 1, MaxRetries: -1})
	defer b.Close()
	for try := range 3 {
		got, err := b.Do(ctx, "LOCK.ACQUIRE", key, "o", 3000, "SESSION").Int64()
		if err == nil && got == token {
			return
		}
		if try == 2 {
			t.Fatalf("re-attach through replica B after a rolling restart of the backends = %d, %v (3 tries); want %d (notes %q)",
				got, err, token, review38Notes(h, key))
		}
		time.Sleep(sessionTick)
	}
}

// TestReview38RestoreKeepsAFixedTokenWithQuarantine: the same as
// TestReview38RestoreKeepsAFixedToken with the shipped restart quarantine
// on (max_ttl 4 s): the restore runs on the quarantined backend (renew.go
// restore sends to every node that answered "not held"), and once its
// quarantine ended, the token is still unreadable.
func TestReview38RestoreKeepsAFixedTokenWithQuarantine(t *testing.T) {
	sleepBound(t)
	const maxTTL = 4 * time.Second
	h := boundHarnessWith(t, func(c *config.Config) { c.Quarantine, c.MaxTTL = true, maxTTL })
	ctx := t.Context()
	const key = "review38:fixedq"
	a := oneConn(h)
	harness.Eventually(t, "the backends out of their first quarantine", func() bool {
		ok, err := a.SetNX(ctx, key, "tokA", 0).Result()
		return err == nil && ok
	})
	var token int64
	harness.Eventually(t, "the fencing counters marked", func() bool {
		var err error
		token, err = a.Do(ctx, "LOCK.TOKEN", key).Int64()
		return err == nil && token > 0
	})
	h.Backend[0].Restart() // empty
	harness.Eventually(t, "the renewal restores the lock on the restarted backend", func() bool { return h.Holders(key, "tokA") == 5 })
	time.Sleep(maxTTL + time.Second) // its quarantine ends
	got, err := a.Do(ctx, "LOCK.TOKEN", key).Int64()
	if err != nil || got != token {
		t.Fatalf("LOCK.TOKEN after one backend restarted (quarantine over) and the lock was restored there = %d, %v; want %d (notes %q)",
			got, err, token, review38Notes(h, key))
	}
}

// TestReview38RollingRestartTokensIncrease: after the three backends
// restarted empty one after the other under a held session lock (as in
// TestReview38RollingRestartKeepsTheSessionToken), the holder releases it
// and another owner takes the key: its token must be above the first one.
func TestReview38RollingRestartTokensIncrease(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.SessionTick = sessionTick })
	ctx := t.Context()
	const key = "review38:rolling-next"
	a := oneConn(h)
	token, err := a.Do(ctx, "LOCK.ACQUIRE", key, "o", 3000, "SESSION").Int64()
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the lock on every backend", func() bool { return h.Holders(key, "o") == 3 })
	for i := range h.Backend {
		h.Backend[i].Restart() // empty
		harness.Eventually(t, fmt.Sprint("restored after backend ", i, " restarted"), func() bool { return h.Holders(key, "o") == 3 })
	}
	if n, err := a.Do(ctx, "LOCK.RELEASE", key, "o").Int64(); err != nil || n != 1 {
		t.Fatalf("LOCK.RELEASE = %d, %v", n, err)
	}
	b := oneConn(h)
	var next int64
	harness.Eventually(t, "another owner takes the key", func() bool {
		next, err = b.Do(ctx, "LOCK.ACQUIRE", key, "p", 3000).Int64()
		return err == nil
	})
	if next <= token {
		t.Fatalf("token after a rolling restart of the backends = %d; want above %d", next, token)
	}
}
