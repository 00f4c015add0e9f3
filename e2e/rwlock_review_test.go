package e2e

// Adversarial review of afe36ac (Redisson RReadWriteLock by quorum): each
// test here fails on afe36ac and shows one break.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// rwTry sends Redisson 3.52's read or write acquire script with owner as
// given (no suffix added): true when granted (nil reply).
func rwTry(t *testing.T, c *redis.Client, s rwScripts, name, owner string, write bool, lease int64) bool {
	t.Helper()
	var res *redis.Cmd
	if write {
		res = c.Eval(t.Context(), s.write, []string{name}, lease, owner)
	} else {
		res = c.Eval(t.Context(), s.read, []string{name, "{" + name + "}:" + owner + ":rwlock_timeout"}, lease, owner, owner+":write")
	}
	switch err := res.Err(); {
	case err == redis.Nil:
		return true
	case err != nil:
		t.Logf("%s's %s acquire: %v", owner, map[bool]string{true: "write", false: "read"}[write], err)
		return false
	}
	return false
}

// TestRWWriterNotNamedWriteIsRefused (helper-84 on afe36ac, failed 3 of 3
// there): the write acquire script (6306ba3b) with an owner that does not
// end in ":write" was granted, but every node's RW.settle then found no
// ":write" holder and turned the lock "read": a reader was granted beside
// the writer, inside both windows. A node tells the writer by its name
// (Redisson's <thread>:write), so such a write is refused with an error;
// the writer named so excludes the reader.
func TestRWWriterNotNamedWriteIsRefused(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	c := h.Client()
	s := loadRWScripts(t)
	const name = "rw:{suffix}"
	if rwTry(t, c, s, name, "writer-1", true, 20000) {
		t.Fatal("a write by an owner not named <thread>:write was granted: its nodes read the lock as read")
	}
	if !rwTry(t, c, s, name, "writer:1:write", true, 20000) {
		t.Fatal("the write acquire of a free lock was refused")
	}
	if rwTry(t, c, s, name, "reader-2", false, 20000) {
		modes := []string{}
		for _, b := range h.Backend {
			m, _ := b.Client().HGet(t.Context(), name, "mode").Result()
			modes = append(modes, m)
		}
		t.Errorf("a reader was granted beside the writer writer-1 (granted the write lock 20 s, still inside it); the nodes' modes: %v", modes)
	}
}

// TestRWWriteGrantWithoutWriterSuffixOnOneRedis is the reference: the same
// two scripts on one redis-server (no proxy) refuse the reader.
func TestRWWriteGrantWithoutWriterSuffixOnOneRedis(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 1, nil)
	c := h.Backend[0].Client()
	s := loadRWScripts(t)
	const name = "rw:{suffix}"
	if !rwTry(t, c, s, name, "writer-1", true, 20000) {
		t.Fatal("write refused on one Redis")
	}
	if rwTry(t, c, s, name, "reader-2", false, 20000) {
		t.Fatal("one Redis granted the reader (the reference is wrong)")
	}
}

// TestRWTenantBracePrefix (helper-84, failed 3 of 3 on afe36ac): the
// derived-name rule of afe36ac (a "" prefix in
// derivedPrefixes: any name starting with "{" belongs to whatever its
// braces hold) gives a tenant whose prefix starts with a hash tag, as Redis
// Cluster users write them ("{billing}:"), none of its own keys, and gives
// them to another tenant whose prefix starts what the braces hold
// ("billing"). Both prefixes pass config validation (neither starts the
// other).
func TestRWTenantBracePrefix(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{
			{Name: "cluster-tenant", Password: "pa", Prefix: "{billing}:"},
			{Name: "other", Password: "pb", Prefix: "billing"},
		}
	})
	ctx := t.Context()
	as := func(user, pass string) *redis.Client {
		return h.Client(func(o *redis.Options) { o.Username, o.Password = user, pass })
	}
	a, b := as("cluster-tenant", "pa"), as("other", "pb")
	const key = "{billing}:job"
	if ok, err := a.SetNX(ctx, key, "tok-a", 10*time.Second).Result(); !ok || err != nil {
		t.Errorf("tenant with prefix {billing}: locking its own key %s = %v, %v", key, ok, err)
	}
	err := b.SetNX(ctx, key, "tok-b", 10*time.Second).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		v, _ := b.Get(ctx, key).Result()
		t.Errorf("tenant with prefix billing reached %s (another tenant's key): SET NX = %v; GET = %q", key, err, v)
	}
}

// backendClients: one client per backend address.
var backendClients sync.Map

// rwHoldCounts reads owner's hold count on each backend (-1: absent or unreachable).
func rwHoldCounts(t *testing.T, h *harness.Harness, name, owner string) []int64 {
	t.Helper()
	out := make([]int64, len(h.Backend))
	for i, b := range h.Backend {
		bc, ok := backendClients.Load(b.Addr)
		if !ok {
			bc, _ = backendClients.LoadOrStore(b.Addr, b.Client())
		}
		n, err := bc.(*redis.Client).HGet(t.Context(), name, owner).Int64()
		if err != nil {
			n = -1
		}
		out[i] = n
	}
	return out
}

// allBackendsVote waits until a lock round through c reaches every backend.
func allBackendsVote(t *testing.T, h *harness.Harness, c *redis.Client) {
	t.Helper()
	harness.Eventually(t, "a round reaches every backend", func() bool {
		const probe = "probe:{all}"
		ok, _ := c.SetNX(t.Context(), probe, "p", 2*time.Second).Result()
		if !ok {
			return false
		}
		n := h.Holders(probe, "p")
		_ = c.Eval(t.Context(), harness.UnlockScript, []string{probe}, "p").Err()
		return n == len(h.Backend)
	})
}

// rwEnds reads how long owner's window lasts on each backend (its end in the
// holders set, minus the backend's time), in ms; -1: none.
func rwEnds(t *testing.T, h *harness.Harness, name, owner string) []int64 {
	t.Helper()
	out := make([]int64, len(h.Backend))
	for i, b := range h.Backend {
		bc, ok := backendClients.Load(b.Addr)
		if !ok {
			bc, _ = backendClients.LoadOrStore(b.Addr, b.Client())
		}
		rc := bc.(*redis.Client)
		end, err := rc.ZScore(t.Context(), quorum.HoldersKey(name), owner).Result()
		now, err2 := rc.Time(t.Context()).Result()
		if err != nil || err2 != nil {
			out[i] = -1
			continue
		}
		out[i] = int64(end) - now.UnixMilli()
	}
	return out
}

// TestRWLevellingShortensAReadersWindow: levelHolds sets a granting node
// whose hold count is behind the largest one reported to it
// (OpHashSetHolds), and hashsetholds.lua sets the holder's end there
// exactly (RW.setEnd(..., true)), while a grant itself never sets an end
// earlier (RW.setEnd(..., false)). Hold counts diverge under faults (a node
// paused during a failed re-entry executes the grant when resumed: the
// proxy rolls back only the nodes that answered). So a reader's re-entry
// with a shorter lease cuts its earlier, longer hold down to the short
// lease on every behind node that voted; two such re-entries (each with two
// backends paused, which need not be the same) leave the 60 s read on one
// node, and a writer takes the lock while the reader's first read, never
// released, is inside its window.
func TestRWLevellingShortensAReadersWindow(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	c := h.Client()
	s := loadRWScripts(t)
	const name, reader, writer = "rw:{level}", "uuid-r:1", "uuid-w:2:write"
	if !rwTry(t, c, s, name, reader, false, 60000) {
		t.Fatal("first read refused")
	}
	firstUntil := time.Now().Add(60 * time.Second)
	// warm waits until a round reaches every backend: the proxy's links to
	// them are open (a fresh link's handshake, not the grant, would meet
	// the pause) and none is known down (skipped).
	warm := func() { allBackendsVote(t, h, c) }
	state := func() ([]int64, []int64) {
		return rwHoldCounts(t, h, name, reader), rwEnds(t, h, name, reader)
	}
	for step := 0; ; step++ {
		if step == 6 || time.Until(firstUntil) < 20*time.Second {
			n, e := state()
			t.Logf("the attack found no way to shorten the first read's window: holds %v, windows %v", n, e)
			break
		}
		n, e := state()
		t.Logf("holds %v, windows (ms) %v", n, e)
		top, ahead := int64(0), -1
		for i, v := range n {
			if v > top {
				top, ahead = v, i
			}
		}
		var long, behind []int
		for i := range n {
			if e[i] > 10000 {
				long = append(long, i)
				if n[i] < top {
					behind = append(behind, i)
				}
			}
		}
		if len(long) <= 2 {
			break // the 60 s read is left on fewer than a quorum
		}
		warm()
		if len(behind) == 0 {
			// Counts are even: a failed re-entry (three backends paused; the
			// stale grant lands on them when resumed) makes them diverge.
			paused := [][]int{{2, 3, 4}, {0, 1, 2}}[step%2]
			for _, i := range paused {
				h.Backend[i].Pause()
			}
			if rwTry(t, c, s, name, reader, false, 60000) {
				t.Fatalf("re-entry granted with backends %v paused", paused)
			}
			for _, i := range paused {
				h.Backend[i].Resume()
			}
			time.Sleep(time.Second)
			continue
		}
		// A re-entry with a 4 s lease (Redisson never shortens a read lock on
		// re-entry: max(pttl, lease)) that the ahead node and behind ones
		// answer: the others paused while it runs.
		voters := append([]int{ahead}, behind[:min(2, len(behind))]...)
		var paused []int
		for i := range h.Backend {
			if !slices.Contains(voters, i) {
				paused = append(paused, i)
			}
		}
		for _, i := range paused[:len(paused)-max(0, 3-len(voters))] {
			h.Backend[i].Pause()
		}
		granted := rwTry(t, c, s, name, reader, false, 4000)
		for _, i := range paused {
			h.Backend[i].Resume()
		}
		if !granted {
			t.Fatal("a re-entry with a 4 s lease was refused")
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Past the short leases.
	time.Sleep(4500 * time.Millisecond)
	n, e := state()
	t.Logf("before the writer: holds %v, windows (ms) %v", n, e)
	if time.Now().After(firstUntil) {
		t.Skip("ran too slowly: the first read's window is over")
	}
	warm()
	if rwTry(t, c, s, name, writer, true, 20000) {
		t.Errorf("a writer was granted %v before the end of the reader's first read (60 s lease), which it never released", time.Until(firstUntil).Round(time.Millisecond))
	}
}

// TestRWLockDelayOfAnExpiredWriterBesideItsThreadsRead: with lock_delay, a
// writer that expired unreleased keeps the lock unavailable for the delay
// (its note outlives it) — unless its own thread also reads the lock: then
// RW.settle drops the writer's expired hold and turns the lock "read" at the
// writer's end, and another reader is granted at once, inside the writer's
// lock-delay, while the writer (paused, cut off) may still be writing. The
// same writer without its thread's read leaves the reader refused.
func TestRWLockDelayOfAnExpiredWriterBesideItsThreadsRead(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.LockDelay = 4 * time.Second })
	c := h.Client()
	s := loadRWScripts(t)
	for _, withRead := range []bool{false, true} {
		name := fmt.Sprintf("rw:{delay-%v}", withRead)
		const thread, other = "uuid-w:1", "uuid-o:2"
		if !rwTry(t, c, s, name, thread+":write", true, 1000) {
			t.Fatal("write refused")
		}
		if withRead && !rwTry(t, c, s, name, thread, false, 30000) {
			t.Fatal("the writer's thread's read refused")
		}
		writerEnd := time.Now().Add(1000 * time.Millisecond)
		time.Sleep(time.Until(writerEnd) + 300*time.Millisecond) // the writer expired, unreleased
		// Twice (on afe36ac the first attempt found the lock "write" before
		// RW.settle dropped the expired writer, and was refused).
		granted := rwTry(t, c, s, name, other, false, 5000)
		if !granted {
			granted = rwTry(t, c, s, name, other, false, 5000)
		}
		inDelay := time.Now().Before(writerEnd.Add(4 * time.Second))
		t.Logf("writer's thread reads too: %v; another reader %v after the writer's end: granted %v", withRead, time.Since(writerEnd).Round(time.Millisecond), granted)
		if granted && inDelay {
			t.Errorf("writer's thread reads too: %v: another reader was granted %v after the writer expired unreleased, inside its 4 s lock_delay", withRead, time.Since(writerEnd).Round(time.Millisecond))
		}
	}
}

// TestRWLockDelayOfAnExpiredReaderEndsWithAnotherRelease: with lock_delay,
// reader R1 expires unreleased while reader R2 keeps the lock; R2's release
// deletes the hash and, released on a quorum, removes the note: a writer is
// granted at once, inside R1's lock-delay. Had R1 been alone, the writer
// would wait out the delay.
func TestRWLockDelayOfAnExpiredReaderEndsWithAnotherRelease(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 3, func(c *config.Config) { c.LockDelay = 4 * time.Second })
	c := h.Client()
	s := loadRWScripts(t)
	const name = "rw:{delay-readers}"
	r1 := &rwClient{c: c, s: s, name: name, owner: "uuid-1:1"}
	r2 := &rwClient{c: c, s: s, name: name, owner: "uuid-2:2"}
	if ok, err := r1.lock(t, false, 1000); !ok || err != nil {
		t.Fatal("r1 refused", err)
	}
	r1End := time.Now().Add(time.Second)
	if ok, err := r2.lock(t, false, 30000); !ok || err != nil {
		t.Fatal("r2 refused", err)
	}
	time.Sleep(time.Until(r1End) + 300*time.Millisecond) // r1 expired, unreleased
	if v, err := r2.unlock(t, false, 30000); err != nil {
		t.Fatalf("r2's unlock = %v, %v", v, err)
	}
	granted := rwTry(t, c, s, name, "uuid-3:3:write", true, 5000)
	if granted && time.Now().Before(r1End.Add(4*time.Second)) {
		t.Errorf("a writer was granted %v after reader r1 expired unreleased, inside its 4 s lock_delay", time.Since(r1End).Round(time.Millisecond))
	}
}

// TestRWHostileMixesHeld (passes on afe36ac): what a hostile client tried
// against an honest writer's lock, and an honest reader's, that held.
func TestRWHostileMixesHeld(t *testing.T) {
	sleepBound(t)
	// Force release off: with it on (the default), MultiLock's lease sets
	// the holders' windows exactly, a documented force release.
	h := harness.New(t, 5, func(c *config.Config) { c.AllowForceRelease = false })
	c := h.Client()
	ctx := t.Context()
	s := loadRWScripts(t)
	rlock, rrenew := clientScript(t, shaRLock), clientScript(t, shaRRenew)
	granted := func(err error) bool { return err == redis.Nil }
	const w = "rw:{hostile-w}"
	if !rwTry(t, c, s, w, "u:1:write", true, 20000) {
		t.Fatal("the honest write refused")
	}
	for _, o := range []string{"mode", "x:write", "u:1:write", "mode:write"} {
		if rwTry(t, c, s, w, o, false, 20000) {
			t.Errorf("a read by %q granted beside the writer", o)
		}
	}
	for _, o := range []string{"mode", "x:write", "y"} {
		if rwTry(t, c, s, w, o, true, 20000) {
			t.Errorf("a write by %q granted beside the writer", o)
		}
	}
	for _, o := range []string{"mode", "z", "u:1"} {
		if granted(c.Eval(ctx, rlock, []string{w}, 20000, o).Err()) {
			t.Errorf("RLock's lock by %q granted on the written lock", o)
		}
	}
	// RLock's renewal and MultiLock's lease (no owner): never shorter.
	_ = c.Eval(ctx, rrenew, []string{w}, 100, "x:write").Err()
	_ = c.Do(ctx, "evalsha", redissonMultiLease, 1, w, 100, "").Err()
	time.Sleep(300 * time.Millisecond)
	if rwTry(t, c, s, w, "honest:7", false, 20000) {
		t.Error("an honest reader granted beside the writer after hostile renewals and a lease")
	}
	if n, err := c.Exists(ctx, w).Result(); n != 1 || err != nil {
		t.Errorf("EXISTS of the written lock = %d, %v", n, err)
	}
	// Readers hold: a write without the suffix, and RLock's lock, refused.
	const r = "rw:{hostile-r}"
	if !rwTry(t, c, s, r, "honest:1", false, 20000) {
		t.Fatal("the honest read refused")
	}
	if rwTry(t, c, s, r, "y", true, 20000) || rwTry(t, c, s, r, "honest:1", true, 20000) {
		t.Error("a write granted beside a reader")
	}
	if granted(c.Eval(ctx, rlock, []string{r}, 20000, "z").Err()) {
		t.Error("RLock's lock granted on the read lock")
	}
	// The RW scripts on a plain RLock's key and on a string lock's key.
	const p, str = "rw:{plain}", "rw:{string}"
	if !granted(c.Eval(ctx, rlock, []string{p}, 20000, "p:1").Err()) {
		t.Fatal("RLock refused")
	}
	if ok, _ := c.SetNX(ctx, str, "v", 20*time.Second).Result(); !ok {
		t.Fatal("SET NX refused")
	}
	for _, k := range []string{p, str} {
		if rwTry(t, c, s, k, "q:1", false, 20000) || rwTry(t, c, s, k, "q:1:write", true, 20000) || rwTry(t, c, s, k, "p:1", false, 20000) {
			t.Errorf("a read-write lock granted on %s", k)
		}
	}
}

// aheadOnDE makes reader r's hold count one higher on backends D and E (3,
// 4) than on A, B, C, as a failed re-entry's stale grant leaves it: run on
// D and E only (paused while it ran, executed when resumed), rolled back on
// A and B, which answered, and never sent to C. The re-entry runs through a
// second replica over D and E alone, the same backend script: pausing
// backends to leave that shape behind hung on the proxy's timing (which of
// D and E got the grant, or its rollback too, varied on a loaded machine).
// owner names r's hold as the counts are read.
func aheadOnDE(t *testing.T, h *harness.Harness, c *redis.Client, r *rwClient, owner string) {
	t.Helper()
	allBackendsVote(t, h, c)
	cfg := h.Cfg
	cfg.Backends = cfg.Backends[3:5:5]
	de := harness.Of(t, h.Backend[3:5:5], cfg)
	de.App, de.Addr = de.Serve()
	stale := *r
	stale.c = de.Client()
	if ok, err := stale.lock(t, false, 60000); !ok || err != nil {
		t.Fatal("the re-entry over D and E refused:", err)
	}
	if n := rwHoldCounts(t, h, r.name, owner); n[3] != 2 || n[4] != 2 {
		t.Fatalf("hold counts %v after the re-entry over D and E", n)
	}
}

// TestRWReadUnlockRefusedWhenAMinorityIsAhead: a reader's hold count ahead
// on one or two nodes (a failed re-entry's stale grant, executed by a
// paused node when resumed) makes ReleaseRW judge the count by that
// minority (before = 2): the majority, where the reader's one hold goes,
// is "off", and the repair (OpHashSetHolds with TTL 0: a read unlock keeps
// the window) is refused on every node where the hold is gone (hashsetholds:
// free and ms > 0, or holds). Fewer than Q level: the unlock of a held lock
// answers an error (NOQUORUM), its holds gone on the majority and left on
// the minority. A plain RLock's unlock (with its lease) repairs there.
func TestRWReadUnlockRefusedWhenAMinorityIsAhead(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	c := h.Client()
	s := loadRWScripts(t)
	const name = "rw:{unlock-ahead}"
	r := &rwClient{c: c, s: s, name: name, owner: "uuid-r:1"}
	if ok, err := r.lock(t, false, 60000); !ok || err != nil {
		t.Fatal("read refused", err)
	}
	// A failed re-entry whose stale grant lands on D and E only (paused
	// while it ran; the proxy rolled back A and B, which answered): C is
	// paused first, behind a round whose answer it owes, so the grant for C
	// waits in the proxy's queue past its deadline and is never sent.
	aheadOnDE(t, h, c, r, r.owner)
	if n := rwHoldCounts(t, h, name, r.owner); n[0] != 1 || n[1] != 1 || n[2] != 1 {
		t.Skipf("hold counts %v: not the shape this test needs", n)
	}
	counts := rwHoldCounts(t, h, name, r.owner)
	t.Logf("hold counts: %v", counts)
	// The client holds it (once, or as many times as the majority says);
	// its unlock must not be refused.
	allBackendsVote(t, h, c)
	v, err := r.unlock(t, false, 60000)
	if err != nil {
		t.Errorf("the reader's unlock of a lock it holds (hold counts %v) = %v, %v; after it: %v", counts, v, err, rwHoldCounts(t, h, name, r.owner))
	}
}
