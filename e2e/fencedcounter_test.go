package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// fencedRig sends Redisson RFencedLock's tryLock and 3.24+ unlock through
// one replica over 3 backends.
type fencedRig struct {
	t      *testing.T
	h      *harness.Harness
	c      *redis.Client
	unlock string
	n      int
}

func newFencedRig(t *testing.T, more func(*config.Config)) *fencedRig {
	h := harness.New(t, 3, more)
	return &fencedRig{t: t, h: h, c: h.Client(), unlock: clientScript(t, shaRUnlock)}
}

// cycle takes lock name fenced with counter (a new owner each time),
// releases it leaving its result in latch for latchMS, and answers the
// token the grant gave.
func (r *fencedRig) cycle(name, counter, latch string, latchMS int) int64 {
	r.t.Helper()
	ctx := r.t.Context()
	r.n++
	owner := fmt.Sprint("u", r.n, ":1")
	v, err := r.c.EvalSha(ctx, shaRFencedTry, []string{name, counter}, 10000, owner).Result()
	pair, _ := v.([]any)
	if err != nil || len(pair) != 2 || pair[0] != int64(-1) {
		r.t.Fatalf("fenced tryLock %d of %s = %v, %v", r.n, name, v, err)
	}
	if err := r.c.Eval(ctx, r.unlock, []string{name, "redisson_lock__channel:" + name, latch}, 0, 10000, owner, "publish", latchMS).Err(); err != nil {
		r.t.Fatalf("unlock %d of %s: %v", r.n, name, err)
	}
	return pair[1].(int64)
}

// TestFencedCounterOutOfClientReach (safety; each attack made the next
// token 1 after 2 or more on 4b4a6d2, where a Redisson RFencedLock's token
// counter was the client-named key itself): ordinary client commands that
// reach a key by its name — the redis.io docs' compare-and-delete, a DEL
// (force release), node-redlock's compare-and-extend — aimed at the
// counter never lower a later token, and a fenced tryLock naming another
// client's lock as its counter leaves that lock as it was.
func TestFencedCounterOutOfClientReach(t *testing.T) {
	r := newFencedRig(t, func(c *config.Config) { c.AllowForceRelease = true })
	ctx := t.Context()
	const name, counter = "{fc}", "redisson_lock_token:{fc}"
	latch := func(i int) string { return fmt.Sprint("redisson_unlock_latch:{fc}:", i) }
	r.cycle(name, counter, latch(0), 10000)
	last := r.cycle(name, counter, latch(1), 10000)
	if got, err := r.c.Get(ctx, counter).Int64(); err != nil || got != last {
		t.Errorf("GET %s = %d, %v; want the last token %d", counter, got, err, last)
	}
	attacks := []struct {
		what string
		do   func() (any, error)
	}{
		{"the docs' compare-and-delete", func() (any, error) {
			return r.c.Eval(ctx, clientScript(t, shaDocsUnlock), []string{counter}, fmt.Sprint(last)).Result()
		}},
		{"DEL (a force release)", func() (any, error) { return r.c.Del(ctx, counter).Result() }},
		{"node-redlock's compare-and-extend", func() (any, error) {
			return r.c.EvalSha(ctx, shaRedlock5Ext, []string{counter}, fmt.Sprint(last), 50).Result()
		}},
	}
	for i, a := range attacks {
		v, err := a.do()
		time.Sleep(100 * time.Millisecond) // past the extend's 50 ms, had it set one
		tok := r.cycle(name, counter, latch(10+i), 10000)
		t.Logf("%s answered %v, %v; the next token %d after %d", a.what, v, err, tok, last)
		if tok <= last {
			t.Errorf("after %s of the counter, the token went from %d to %d", a.what, last, tok)
		}
		last = tok
	}
	// Another client's lock, named as a fenced lock's counter.
	if err := r.c.SetArgs(ctx, "{fc}:other", "5", redis.SetArgs{Mode: "NX", TTL: 10 * time.Second}).Err(); err != nil {
		t.Fatal(err)
	}
	r.cycle("{fc}:b", "{fc}:other", latch(20), 10000)
	if v, err := r.c.Get(ctx, "{fc}:other").Result(); err != nil || v != "5" {
		t.Errorf("another client's lock used as a counter now reads %q, %v; want \"5\"", v, err)
	}
	if n, err := r.c.Eval(ctx, clientScript(t, shaDocsUnlock), []string{"{fc}:other"}, "5").Int64(); err != nil || n != 1 {
		t.Errorf("its owner's release = %d, %v; want 1", n, err)
	}
}

// TestFencedCounterNamedAfterALatch (helper-113; failed on 4b4a6d2, whose
// counter INCRed an unlock latch in place and kept its TTL, so it expired
// and the next token was 1 after 3): a counter named after a key that has
// a TTL never expires with it.
func TestFencedCounterNamedAfterALatch(t *testing.T) {
	r := newFencedRig(t, func(c *config.Config) { c.AllowForceRelease = false })
	const name, L = "{G}", "redisson_unlock_latch:{G}:ctr"
	r.cycle(name, "redisson_lock_token:{G}", L, 1500) // leaves latch L = "1", TTL 1.5s
	t1 := r.cycle(name, L, "redisson_unlock_latch:{G}:a", 10000)
	t2 := r.cycle(name, L, "redisson_unlock_latch:{G}:b", 10000)
	time.Sleep(2 * time.Second)
	t3 := r.cycle(name, L, "redisson_unlock_latch:{G}:c", 10000)
	t.Logf("tokens from counter %s: %d %d, then after 2s %d", L, t1, t2, t3)
	if t2 <= t1 || t3 <= t2 {
		t.Errorf("fencing tokens %d, %d, %d: not rising", t1, t2, t3)
	}
}
