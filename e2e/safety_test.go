package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	hist "github.com/redlock-proxy/redlock-proxy/internal/history"
)

// scenario is one fault the suite injects while clients contend.
type scenario struct {
	name       string
	quarantine bool
	expect     string               // what must hold, for SAFETY.md
	mutate     func(*config.Config) // both replicas
	child      func(*config.Config) // the child replica, after mutate
	ttls       func() time.Duration
	before     func(e *faultEnv) // applied before the load
	fault      func(e *faultEnv, addrs [2]string, child *exec.Cmd, h *history)
	check      func(r *outcome) error
	lateOK     bool // a replica is paused: OKs may arrive after their window (safeButLate)
	outOfModel bool // the history check reports, but does not fail the row
	// alone: no other scenario runs meanwhile (its claim needs session
	// renewals on time, which a second scenario's load beside it on a busy
	// machine can delay past a TTL).
	alone bool
}

// outcome is what one scenario produced.
type outcome struct {
	h                     *history
	overlaps              []string
	keysNow, noTTL, leaks int
	check                 hist.Result // the whole history's check
}

func safe(r *outcome) error {
	if len(r.overlaps) > 0 || r.noTTL > 0 || r.leaks > 0 || r.h.late > 0 {
		return fmt.Errorf("%d overlaps, %d OKs after their window, %d keys without TTL, %d leaked keys; first overlap: %v",
			len(r.overlaps), r.h.late, r.noTTL, r.leaks, r.overlaps)
	}
	return nil
}

func scenarios() []scenario {
	return []scenario{
		{name: "baseline contention", quarantine: true, expect: "no overlap, no leak",
			check: func(r *outcome) error {
				if r.h.ok == 0 || len(r.h.other) > 0 {
					return fmt.Errorf("%d acquired, %d unexpected errors: %v", r.h.ok, len(r.h.other), r.h.other)
				}
				return safe(r)
			}},
		{name: "minority killed (kill -9) and restarted empty while locks are held", quarantine: true,
			expect: "no overlap: the restarted backend does not vote", fault: restartFault, check: safe},
		{name: "the same with quarantine switched off (out of model)", quarantine: false,
			expect: "the checker catches the overlap", fault: restartFault,
			check: func(r *outcome) error {
				if len(r.overlaps) == 0 {
					return fmt.Errorf("no overlap found: without quarantine a second owner should have won while the first held the lock")
				}
				return nil
			}},
		{name: "majority down (connections reset on 3 of 5)", quarantine: true, expect: "no OK at all, NOQUORUM errors",
			before: func(e *faultEnv) {
				for i := range 3 {
					e.toxic(i, "down", "reset_peer", "upstream", 1, `{"timeout":0}`)
				}
			},
			check: func(r *outcome) error {
				if r.h.ok > 0 || r.h.noQuorum == 0 {
					return fmt.Errorf("%d OK replies and %d NOQUORUM with a majority down", r.h.ok, r.h.noQuorum)
				}
				return safe(r)
			}},
		{name: "one backend paused (SIGSTOP) longer than the TTL", quarantine: true, expect: "no overlap, no leak",
			fault: func(e *faultEnv, _ [2]string, _ *exec.Cmd, _ *history) {
				time.Sleep(500 * time.Millisecond)
				e.redis[0].Pause()
				time.Sleep(2500 * time.Millisecond)
				e.redis[0].Resume()
			}, check: safe},
		{name: "latency near the TTL on a majority (300 ms on 3 of 5, TTL 400 ms)", quarantine: true,
			expect: "validity check refuses every lock; rollback leaves no key",
			mutate: func(c *config.Config) {
				c.NodeTimeout, c.TimeoutFactor, c.MinValidity = time.Second, 0.95, 150*time.Millisecond
			},
			ttls: func() time.Duration { return 400 * time.Millisecond },
			before: func(e *faultEnv) {
				for i := range 3 {
					e.toxic(i, "slow", "latency", "downstream", 1, `{"latency":300}`)
				}
			},
			check: func(r *outcome) error {
				if r.h.ok > 0 || r.keysNow > 0 {
					return fmt.Errorf("%d locks granted with too little validity; %d keys left right after", r.h.ok, r.keysNow)
				}
				return safe(r)
			}},
		{name: "connections reset mid-round (reset_peer on 3 of 5)", quarantine: true, expect: "no overlap, no leak",
			before: func(e *faultEnv) {
				for i := range 3 {
					e.toxic(i, "reset", "reset_peer", "downstream", 0.5, `{"timeout":150}`)
				}
			}, check: safe},
		{name: "one backend's clock fast by drift_factor (each lock's TTL cut by 1% there)", quarantine: true,
			expect: "no overlap: the TTL padding absorbs drift", fault: cutTTLs(0.99, true), check: safe},
		{name: "clock jump on one backend (its keys' TTLs cut to a quarter; out of model)", quarantine: true,
			expect: "out of model: overlaps are possible and reported; no leak", fault: cutTTLs(0.25, false), outOfModel: true,
			check: func(r *outcome) error {
				if r.noTTL > 0 || r.leaks > 0 {
					return fmt.Errorf("%d keys without TTL, %d leaked keys", r.noTTL, r.leaks)
				}
				return nil
			}},
		{name: "clients disconnect mid-round; one proxy replica paused (SIGSTOP) 2.5 s", quarantine: true,
			expect: "no overlap; no key outlives its TTL; an OK may arrive late only for a request that waited in the kernel while the replica was stopped",
			fault:  disconnectAndPause, check: safeButLate, lateOK: true},
		{name: "a retry of the same value through replica 2 while replica 1's links to 3 of 5 stall, then heal before its rollback",
			quarantine: true, expect: "no overlap: a rollback removes only its own round's writes", fault: retryAcrossReplicas, check: safeAndClean},
		{name: "locks pipelined behind a read that waits 150 ms for a slow backend (TTL 120 ms)", quarantine: true,
			expect: "no OK after its window: late grants are revoked", fault: slowNeighbours, check: safeAndClean,
			mutate: func(c *config.Config) { c.TimeoutFactor = 0.5 }},
		{name: "replicas with max_ttl 3 s and 1 s; a backend holding a 2.5 s lock restarts empty", quarantine: true,
			expect: "no overlap: quarantine lasts the longest max_ttl of any replica", fault: longerReplica, check: safeAndClean,
			child: func(c *config.Config) { c.MaxTTL = time.Second },
			ttls:  func() time.Duration { return time.Duration(200+rand.IntN(700)) * time.Millisecond }},
		{name: "Redisson lock re-entered during three different minority outages, then unlocked four times", quarantine: true,
			expect: "unlocks answer 0, 0, 0, 1; no second owner before the last", fault: reentrantOutages, check: safeAndClean},
		{name: "Redisson read-write lock, readers and writers through both replicas, while backends pause and one restarts empty", quarantine: true,
			expect: "no writer beside another holder; readers share it", fault: rwAcrossFaults, check: safeAndClean},
		{name: "Redisson fair lock, waiters through both replicas, while backends pause and one restarts empty", quarantine: true,
			expect: "no overlap; in the quiet spells before and after, granted in the order they queued", fault: fairAcrossFaults, check: safeAndClean},
		{name: "Redisson permit semaphores of 1 and 2 permits, taken through both replicas while backends pause and one restarts empty", quarantine: true,
			expect: "never more holders than permits", fault: permitsAcrossFaults, check: safeAndClean},
		{name: "a 2-permit semaphore taken by three clients, each through a different majority of backends", quarantine: true,
			expect: "two get a permit, the third is refused (a counter kept by majority lets it in)", fault: permitsOverMajorities, check: safeAndClean},
		{name: "fenced tryLock, LOCK.ACQUIRE and SET NX PX with LOCK.TOKEN through both replicas while backends restart empty and pause", quarantine: true,
			expect: "tokens strictly increase or are refused (NOQUORUM)", fault: tokensAcrossFaults, check: safeAndClean},
		{name: "session locks (WAIT, SESSION) held past their TTL while a backend restarts empty; a session lock left on a replica paused past its TTL (lock_delay 1 s)",
			quarantine: true, expect: "no overlap: renewals keep session locks, the paused replica's lock is free only after its delay and is not renewed after; tokens increase",
			fault: sessionsAcrossFaults, check: safeButLateAndClean, lateOK: true, alone: true,
			mutate: func(c *config.Config) { c.NativeLockDelay = time.Second }},
		{name: "a session lock held while a backend restarts empty and leaves its quarantine; another owner asks all along", quarantine: true,
			expect: "renewals restore the lock on the restarted backend; no overlap",
			fault:  sessionRestore, check: safeAndClean, alone: true,
			mutate: func(c *config.Config) { c.NativeLockDelay = time.Second }},
		{name: "a backend holding a lock restarts empty; redlock-proxy bootstrap is run and a marker for its new run appears", quarantine: true,
			expect: "bootstrap refuses; no replica ends its quarantine before its own clock does; no overlap",
			fault:  bootstrapAfterRestart, check: safeAndClean},
		{name: "a hostile client rewrites the proxy's bookkeeping through both replicas; a plain lock's first LOCK.TOKEN read at once through both; a backend restarts empty", quarantine: true,
			expect: "every bookkeeping command refused (NOPERM); one token per lock, strictly increasing; no overlap",
			fault:  firstTokensAndAttacks, check: safeAndClean},
		{name: "a queued waiter, a waiter that sent a stray byte and hung up, and plain and native acquirers without WAIT through both replicas", quarantine: true,
			expect: "the live waiter is granted next and promptly (the ghost left the queue); nobody overtakes it; no overlap",
			fault:  waitersFirst, check: safeAndClean},
		{name: "every backend killed and restarted empty at once (a power loss) while locks are held; LOCK.ACQUIRE through both replicas before and after", quarantine: true,
			expect: "no overlap: no backend counts until the window has passed; tokens after the wipe above those before (no bootstrap run)",
			fault:  totalWipe, check: safeAndClean},
	}
}

// safeButLate is safe except for late OKs: a request that waited in the
// kernel's socket buffer while its replica was stopped is read, and its
// window starts, only when the replica runs again, so its OK can reach the
// client after the window the client counts from its send. The lock's keys
// are written after that read, padded, so they outlive the client's window:
// no overlap (the checker still looks).
func safeButLate(r *outcome) error {
	late := r.h.late
	r.h.late = 0
	defer func() { r.h.late = late }()
	return safe(r)
}

// safeButLateAndClean is safeButLate (a replica is paused) with no wrong answer.
func safeButLateAndClean(r *outcome) error {
	if len(r.h.other) > 0 {
		return fmt.Errorf("%d wrong answers: %v", len(r.h.other), r.h.other)
	}
	return safeButLate(r)
}

// safeAndClean is safe, and no client got an answer other than OK, nil or
// NOQUORUM (a wrong unlock answer, a token that went back).
func safeAndClean(r *outcome) error {
	if len(r.h.other) > 0 {
		return fmt.Errorf("%d wrong answers: %v", len(r.h.other), r.h.other)
	}
	return safe(r)
}

// restartFault builds the hazard restart quarantine exists for: A's lock
// lands on backends 0-2 only (3 and 4 refuse connections meanwhile), then
// backend 0 is killed and restarted empty while A's window is open, and B
// asks through the other replica. Backend 1 restarts too, later.
func restartFault(e *faultEnv, addrs [2]string, _ *exec.Cmd, h *history) {
	ctx := context.Background()
	ca := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1})
	cb := redis.NewClient(&redis.Options{Addr: addrs[1], MaxRetries: -1})
	defer ca.Close()
	defer cb.Close()
	e.toxic(3, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	e.toxic(4, "refuse", "reset_peer", "upstream", 1, `{"timeout":0}`)
	// Each step waits for the state it needs rather than a fixed time: on a
	// busy machine the replicas' checks come late.
	for _, i := range []int{3, 4} { // both replicas see 3 and 4 down
		if !e.awaitState(ca, 0, i, "down") || !e.awaitState(cb, 1, i, "down") {
			h.fail("not set up: backend %d never down on both replicas", i)
		}
	}
	var sent time.Time
	for n := 0; n < 5; n++ { // A's lock, on 0-2 only (a refused try is no lock)
		sent = time.Now()
		ok, err := ca.SetNX(ctx, "lock:forced", "A", suiteMaxTTL).Result()
		h.attempt("lock:forced", "A", sent, time.Now(), suiteMaxTTL, ok, err, time.Time{})
		if ok {
			break
		}
		if n == 4 {
			h.fail("not set up: A's lock on backends 0-2 got %v, %v", ok, err)
		}
	}
	// Backend 0 loses A's lock while 3 and 4 come back: the waits for
	// them overlap, so as much of A's window as may be is left for B.
	e.redis[0].Restart()
	e.clearToxics()
	for _, i := range []int{3, 4, 0} { // 3, 4 and the restarted 0 answer where B asks
		if !e.awaitAnswering(cb, 1, i) {
			h.fail("not set up: backend %d never answered again on replica 2", i)
		}
	}
	for n := 0; time.Since(sent) < suiteMaxTTL-200*time.Millisecond; n++ {
		s := time.Now()
		ok, err := cb.SetNX(ctx, "lock:forced", "B", suiteMaxTTL).Result()
		h.attempt("lock:forced", fmt.Sprint("B", n), s, time.Now(), suiteMaxTTL, ok, err, time.Time{})
		if ok {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.redis[1].Restart()
}

// cutTTLs emulates a jumping (or much too fast) clock on backend 0: its
// lock keys' remaining TTLs are multiplied by factor, once per lock when
// once, else again and again (the nemesis skews a clock's rate instead).
func cutTTLs(factor float64, once bool) func(*faultEnv, [2]string, *exec.Cmd, *history) {
	return func(e *faultEnv, _ [2]string, _ *exec.Cmd, _ *history) {
		c, ctx := e.redis[0].Client(), context.Background()
		cut := map[string]bool{} // key + value already cut
		for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			keys, _ := c.Keys(ctx, "lock:*").Result()
			for _, k := range keys {
				v, _ := c.Get(ctx, k).Result()
				if once && cut[k+"\x00"+v] {
					continue
				}
				if ttl, err := c.PTTL(ctx, k).Result(); err == nil && ttl > 4*time.Millisecond {
					c.PExpire(ctx, k, time.Duration(float64(ttl)*factor))
					cut[k+"\x00"+v] = true
				}
			}
		}
	}
}

// disconnectAndPause: clients that send an acquire and hang up at once, then
// the child replica stopped for longer than any TTL, mid-traffic.
func disconnectAndPause(_ *faultEnv, addrs [2]string, child *exec.Cmd, _ *history) {
	time.Sleep(300 * time.Millisecond)
	for i := range 20 {
		if nc, err := net.Dial("tcp", addrs[i%2]); err == nil {
			fmt.Fprintf(nc, "SET lock:gone:%d tok NX PX 500\r\n", i)
			nc.Close()
		}
	}
	time.Sleep(500 * time.Millisecond)
	_ = child.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2500 * time.Millisecond)
	_ = child.Process.Signal(syscall.SIGCONT)
}

// TestFaultSuite runs every scenario against real redis-servers behind
// toxiproxy, with two proxy replicas and 30 contending clients, checks each
// scenario's claim, and writes the table to SAFETY.md. The scenarios run two
// at a time, each alone on one of two sets of five backends (faultEnvs;
// those marked alone, alone), and their rows are written in the table's
// order once all have run.
func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite takes a few minutes")
	}
	envs := make(chan *faultEnv, 2)
	for range cap(envs) {
		envs <- newFaultEnv(t)
	}
	time.Sleep(suiteMaxTTL + 100*time.Millisecond) // fresh backends are quarantined at first
	scs := scenarios()
	outcomes := make([]*outcome, len(scs)) // nil: left out by -run, or it failed to run
	t.Cleanup(func() {                     // once every scenario's subtest is done
		var rows []string
		failed := false
		for i, sc := range scs {
			r := outcomes[i]
			if r == nil { // no report from a partial run
				failed = true
				continue
			}
			verdict := "as expected"
			histCell, herr := checkHistory(t, sc, r)
			if err := errors.Join(sc.check(r), herr); err != nil {
				t.Errorf("%s: %v", sc.name, err)
				verdict, failed = "**FAILED**: "+strings.ReplaceAll(err.Error(), "\n", "; "), true
			}
			avail := 0.0
			if r.h.attempts > 0 {
				avail = float64(r.h.ok+r.h.taken) / float64(r.h.attempts)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %.0f%% | %d | %d | %d | %d | %s | %s | %s | %s |",
				sc.name, map[bool]string{true: "on", false: "off"}[sc.quarantine], r.h.attempts, r.h.ok, r.h.taken, r.h.noQuorum,
				100*avail, len(r.overlaps), r.h.late, r.noTTL, r.leaks, r.h.p99().Round(time.Millisecond), histCell, sc.expect, verdict))
			t.Logf("%s: %d attempts, %d OK, %d taken, %d NOQUORUM, %d other, %d overlaps, %d without TTL, %d leaked; history check %s",
				sc.name, r.h.attempts, r.h.ok, r.h.taken, r.h.noQuorum, len(r.h.other), len(r.overlaps), r.noTTL, r.leaks, r.check.Verdict())
		}
		if !failed {
			writeSafetyReport(t, rows)
		}
	})
	var alone sync.RWMutex // held shared by every scenario, whole by one that runs alone
	for i, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if sc.alone {
				alone.Lock()
				defer alone.Unlock()
			} else {
				alone.RLock()
				defer alone.RUnlock()
			}
			e := <-envs
			defer func() { envs <- e }()
			outcomes[i] = runScenario(t, e, sc)
		})
	}
}

// runScenario runs sc on e, which no other scenario uses meanwhile, in
// the caller's subtest: nil if it failed to.
func runScenario(t *testing.T, e *faultEnv, sc scenario) *outcome {
	addrs, child := e.replicas(t, func(c *config.Config) {
		c.Quarantine = sc.quarantine
		if sc.mutate != nil {
			sc.mutate(c)
		}
	}, sc.child)
	if sc.before != nil {
		sc.before(e)
	}
	ttls := sc.ttls
	if ttls == nil {
		ttls = randomTTL
	}
	var fault func(*history)
	if sc.fault != nil {
		fault = func(h *history) { sc.fault(e, addrs, child, h) }
	}
	h := load(t, addrs, 4*time.Second, ttls, fault)
	e.clearToxics()
	r := &outcome{h: h, overlaps: h.overlaps()}
	for _, b := range e.redis {
		r.keysNow += len(harness.UserKeys(t, b.Client()))
	}
	r.noTTL, r.leaks = e.audit(t, e.padded(suiteMaxTTL))
	return r
}

// padded is how long a key written for ttl may live on a backend.
func (e *faultEnv) padded(ttl time.Duration) time.Duration {
	return ttl + ttl/50 + 100*time.Millisecond
}
