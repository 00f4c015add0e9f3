package e2e

// Reserved names (issue 23, A1-A5): no client command, admin or not, may
// name a key or channel under __redlock:, the engine's own bookkeeping.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// refusedAsReserved fails unless err is the reserved-prefix refusal.
func refusedAsReserved(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") || !strings.Contains(err.Error(), quorum.InternalPrefix) {
		t.Errorf("%s = %v; want NOPERM naming %s", what, err, quorum.InternalPrefix)
	}
}

// internalState reads, from every backend, the engine's keys the attacks
// aim at: the fencing counter, the deployment marker, the max_ttl record,
// the counters set, a lock's note and a fair queue.
func internalState(t *testing.T, h *harness.Harness, lock, queued string) []string {
	t.Helper()
	var out []string
	for i, b := range h.Backend {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c := b.Client()
		token, _ := c.Get(ctx, quorum.TokenKey).Result()
		intact, _ := c.Get(ctx, quorum.IntactKey).Result()
		maxTTL, _ := c.Get(ctx, quorum.MaxTTLKey).Result()
		counters, _ := c.SMembers(ctx, quorum.CountersKey).Result()
		meta, _ := c.Dump(ctx, quorum.MetaKey(lock)).Result()
		queue, _ := c.ZRange(ctx, quorum.QueueKey(queued), 0, -1).Result()
		cancel()
		out = append(out, fmt.Sprintf("backend%d token=%q intact=%q max_ttl=%q counters=%v meta=%q queue=%v",
			i, token, intact, maxTTL, counters, meta, queue))
	}
	return out
}

// TestReservedNamesRefusedOnEveryPath replays the attacks of issue 23 A1-A5
// with no authentication configured (every client is an admin): reading
// and resetting the fencing counter, filling it with garbage, deleting a
// lock's note (the lock-delay bypass), forging the deployment marker,
// emptying a fair queue, deleting the records; through every command
// that takes a key or channel. Each is refused naming the prefix, the
// backends' bookkeeping is exactly as before, and tokens keep increasing.
func TestReservedNamesRefusedOnEveryPath(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	c := h.Client()
	var last int64
	for i := range 3 {
		tok, err := c.Do(ctx, "LOCK.ACQUIRE", "fenced", "me", 60000).Int64()
		if err != nil || tok <= last {
			t.Fatalf("LOCK.ACQUIRE #%d = %d, %v; want a token above %d", i, tok, err, last)
		}
		last = tok
		if err := c.Do(ctx, "LOCK.RELEASE", "fenced", "me").Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A lock with its note (the lock-delay bookkeeping) and a queue.
	if err := c.Do(ctx, "LOCK.ACQUIRE", "noted", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	waiter := h.Client(func(o *redis.Options) { o.ReadTimeout = time.Minute })
	waited := make(chan error, 1)
	go func() { waited <- waiter.Do(ctx, "LOCK.ACQUIRE", "noted", "waiter", 60000, "WAIT", 60000).Err() }()
	harness.Eventually(t, "the waiter queued", func() bool { return queuedOn(t, h, "noted", "waiter") >= 2 })
	before := internalState(t, h, "noted", "noted")

	runID, err := h.Backend[0].Client().Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(runID, "run_id:"); i >= 0 {
		runID = strings.Fields(runID[i+len("run_id:"):])[0]
	}
	unlock := clientScript(t, shaDocsUnlock)
	sha, err := c.ScriptLoad(ctx, unlock).Result()
	if err != nil {
		t.Fatal(err)
	}
	tokenKey, meta, queue := quorum.TokenKey, quorum.MetaKey("noted"), quorum.QueueKey("noted")
	waitCh := quorum.InternalPrefix + "wait:noted"
	attacks := []struct {
		what string
		args []any
	}{
		{"A1 GET the counter", []any{"GET", tokenKey}},
		{"A1 compare-and-delete the counter", []any{"EVAL", unlock, 1, tokenKey, "3"}},
		{"A1 the same by EVALSHA", []any{"EVALSHA", sha, 1, tokenKey, "3"}},
		{"A1 DEL the counter", []any{"DEL", tokenKey}},
		{"A1 UNLINK the counter among others", []any{"UNLINK", "x", tokenKey}},
		{"A2 SET garbage", []any{"SET", tokenKey, "x", "NX", "PX", 600000}},
		{"A2 SET XX", []any{"SET", tokenKey, "x", "XX", "PX", 600000}},
		{"A3 GET the note", []any{"GET", meta}},
		{"A3 HGET the note", []any{"HGET", meta, "r"}},
		{"A3 HEXISTS the note", []any{"HEXISTS", meta, "r"}},
		{"A3 compare-and-delete the note", []any{"EVAL", unlock, 1, meta, "x"}},
		{"A3 DELIFEQ the note", []any{"DELIFEQ", meta, "x"}},
		{"A3 DELEX the note", []any{"DELEX", meta, "IFEQ", "x"}},
		{"A4 forge the marker", []any{"SET", quorum.IntactKey, runID, "NX", "PX", 10000}},
		{"A5 DEL the queue", []any{"DEL", queue}},
		{"A5 DEL the lease", []any{"DEL", quorum.QueueLeaseKey("noted")}},
		{"A5 DEL the marker", []any{"DEL", quorum.IntactKey}},
		{"A5 DEL max_ttl", []any{"DEL", quorum.MaxTTLKey}},
		{"A5 DEL the counters", []any{"DEL", quorum.CountersKey}},
		{"EXISTS", []any{"EXISTS", "x", quorum.IntactKey}},
		{"PTTL", []any{"PTTL", meta}},
		{"TTL", []any{"TTL", meta}},
		{"LOCK.ACQUIRE", []any{"LOCK.ACQUIRE", tokenKey, "me", 1000}},
		{"LOCK.EXTEND", []any{"LOCK.EXTEND", meta, "me", 1000}},
		{"LOCK.RELEASE", []any{"LOCK.RELEASE", queue, "waiter"}},
		{"LOCK.TOKEN", []any{"LOCK.TOKEN", tokenKey}},
		{"REDLOCK FORCEUNLOCK", []any{"REDLOCK", "FORCEUNLOCK", tokenKey}},
		{"REDLOCK LOCKS of the prefix", []any{"REDLOCK", "LOCKS", quorum.InternalPrefix}},
		{"node-redlock multi-key acquire", []any{"EVAL", clientScript(t, shaRedlock5Acq), 2, "free", tokenKey, "me", 10000}},
		{"Redisson fenced lock counting in the counter", []any{"EVALSHA", shaRFencedLock, 2, "rfenced", tokenKey, 10000, "me:1"}},
		{"Redisson unlock publishing on a waiter channel", []any{"EVAL", clientScript(t, shaRUnlock), 3, "rlock", waitCh, "latch:1", 0, 10000, "me:1", "PUBLISH", 10000}},
		{"Redisson unlock with a reserved latch", []any{"EVAL", clientScript(t, shaRUnlock), 3, "rlock", "ch", quorum.InternalPrefix + "latch", 0, 10000, "me:1", "PUBLISH", 10000}},
		{"Redisson forceUnlock of the marker", []any{"EVAL", clientScript(t, shaRForce), 2, quorum.IntactKey, "ch", 0}},
		{"Spring release-notify on a reserved channel (ARGV)", []any{"EVALSHA", "7a71e9443a2a41539fb115a5a27d5a748a871aed", 1, "spring", "me", waitCh}},
		{"PUBLISH on a waiter channel", []any{"PUBLISH", waitCh, "released"}},
	}
	for _, a := range attacks {
		refusedAsReserved(t, a.what, c.Do(ctx, a.args...).Err())
	}
	for _, sub := range [][]any{{"SUBSCRIBE", waitCh}, {"SUBSCRIBE", "mine", waitCh}, {"PSUBSCRIBE", quorum.InternalPrefix + "*"}} {
		s := h.Client()
		refusedAsReserved(t, fmt.Sprint(sub...), s.Do(ctx, sub...).Err())
	}
	if after := internalState(t, h, "noted", "noted"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the engine's bookkeeping changed:\nbefore %v\nafter  %v", before, after)
	}
	tok, err := c.Do(ctx, "LOCK.ACQUIRE", "fenced", "me", 60000).Int64()
	if err != nil || tok <= last {
		t.Fatalf("LOCK.ACQUIRE after the attacks = %d, %v; want a token above %d", tok, err, last)
	}
	// The queue is intact: the waiter gets the lock when the holder releases.
	if err := c.Do(ctx, "LOCK.RELEASE", "noted", "holder").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("the queued waiter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued waiter was not granted within 10s of the release")
	}
}

// TestPatternsNeverDeliverReservedChannels: PSUBSCRIBE * (and __redlock*,
// which does not start with the reserved prefix) are allowed, but the
// proxy's own wake-ups on __redlock:wait:<key> never reach them.
func TestPatternsNeverDeliverReservedChannels(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	c := h.Client()
	sub := h.Client().PSubscribe(ctx, "*", "__redlock*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "LOCK.ACQUIRE", "woken", "holder", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	waiter := h.Client(func(o *redis.Options) { o.ReadTimeout = time.Minute })
	waited := make(chan error, 1)
	go func() { waited <- waiter.Do(ctx, "LOCK.ACQUIRE", "woken", "waiter", 60000, "WAIT", 60000).Err() }()
	harness.Eventually(t, "the waiter queued", func() bool { return queuedOn(t, h, "woken", "waiter") >= 2 })
	if err := c.Do(ctx, "LOCK.RELEASE", "woken", "holder").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	// Its wake-up went out before these: read until both arrived.
	for i, last := range []string{"after-release", "later"} {
		if err := c.Publish(ctx, "mine", last).Err(); err != nil {
			t.Fatal(err)
		}
		for {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			msg, err := sub.ReceiveMessage(rctx)
			cancel()
			if err != nil {
				t.Fatalf("waiting for message %d: %v", i, err)
			}
			if strings.HasPrefix(msg.Channel, quorum.InternalPrefix) {
				t.Fatalf("pattern %q delivered the proxy's own channel %q (%q)", msg.Pattern, msg.Channel, msg.Payload)
			}
			if msg.Channel == "mine" && msg.Payload == last && msg.Pattern == "*" {
				break
			}
		}
	}
}

// TestFencingCounterCannotBeReset is issue 23 A1 as reported: read the
// native counter with GET, delete it with the docs' compare-and-delete, and
// the next LOCK.ACQUIRE got token 1 after 1, 2, 3. Both steps are refused
// now, and the next token is 4.
func TestFencingCounterCannotBeReset(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	c := h.Client()
	var last int64
	for i := range 3 {
		tok, err := c.Do(ctx, "LOCK.ACQUIRE", "reset", "me", 60000).Int64()
		if err != nil {
			t.Fatalf("LOCK.ACQUIRE #%d: %v", i, err)
		}
		last = tok
		if err := c.Do(ctx, "LOCK.RELEASE", "reset", "me").Err(); err != nil {
			t.Fatal(err)
		}
	}
	v, err := c.Get(ctx, quorum.TokenKey).Result()
	refusedAsReserved(t, "GET "+quorum.TokenKey+" (read "+v+")", err)
	n, err := c.Eval(ctx, clientScript(t, shaDocsUnlock), []string{quorum.TokenKey}, v).Result()
	refusedAsReserved(t, fmt.Sprint("compare-and-delete of ", quorum.TokenKey, " (answered ", n, ")"), err)
	tok, err := c.Do(ctx, "LOCK.ACQUIRE", "reset", "me", 60000).Int64()
	if err != nil || tok <= last {
		t.Fatalf("LOCK.ACQUIRE after the reset attempt = %d, %v; want a token above %d", tok, err, last)
	}
}

// TestLockDelayCannotBeBypassed is issue 23 A3: a native lock that expired
// unreleased stays taken for its lock-delay; deleting its note
// (__redlock:m:<key>) freed it at once. The delete is refused now, and the
// lock stays taken. The delay is a minute, so a slow machine cannot end it
// on its own during the test.
func TestLockDelayCannotBeBypassed(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.NativeLockDelay = time.Minute })
	ctx := t.Context()
	c := h.Client()
	if err := c.Do(ctx, "LOCK.ACQUIRE", "delayed", "crashed", 200).Err(); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the lock to expire unreleased", func() bool {
		return !harness.AnyKey(t, h.Backend, "delayed")
	})
	refusedAsReserved(t, "DEL of the note", c.Del(ctx, quorum.MetaKey("delayed")).Err())
	if err := c.Do(ctx, "LOCK.ACQUIRE", "delayed", "next", 10000).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LOCK.ACQUIRE inside the lock-delay after the note's delete = %v; want nil (taken)", err)
	}
}
