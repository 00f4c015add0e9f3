package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// TestReview98RefusedAcquireFreesAHeldPermit: a 1-permit semaphore; id X
// is granted (lease 20s). A second tryAcquire that names X again together
// with a new id W is refused (no permit free for W): on one Redis that
// leaves X held. Through the proxy X's round answered "yes" (the node's
// "this id's round again" path), the acquire is all-or-none, so X's grant
// is revoked: "drop X" on every node, X's permit of the FIRST grant gone.
// A third client then gets the one permit while X's holder is inside its
// window: two holders of one permit.
func TestReview98RefusedAcquireFreesAHeldPermit(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	s := &r98Sem{t: t, c: h.Client(), name: "r98:reacquire"}
	s.mustTrySet(1)
	x, w, y := r98ID(), r98ID(), r98ID()
	s.mustAcquire(20000, x) // X holds the only permit until now+20s
	v, err := s.acquire(20000, x, w)
	if r98Granted(v, err) {
		t.Fatalf("tryAcquire(X, W) on a full 1-permit semaphore = OK")
	}
	t.Logf("tryAcquire(X, W) = %s (refused, as on one Redis)", r98Show(v, err))
	v, err = s.acquire(20000, y)
	if r98Granted(v, err) {
		n, _ := s.acquired()
		t.Fatalf("a 1-permit semaphore granted Y while X's 20s lease runs (X was never released): two holders; acquiredPermits = %v", n)
	}
}

// TestReview98FailedAcquireOfAHeldIDFreesIt: two replicas over five
// backends. X is granted through replica 0 (lease 2.9s; max_ttl 3s). The same id X is
// then sent to replica 1 (a second connection naming the id; a client's
// resend through the load balancer) while replica 1's links to the
// backends are slow (170ms to each backend: past the round's 145ms wait, within the rollback's 200ms), so its round fails (NOQUORUM, every
// node timed out). Its rollback "drop X" runs on every node its round may
// have written to and lands there: the permit of X's FIRST grant, which no
// round of replica 1 wrote, is gone. Y is then granted through replica 0
// while X's holder is inside its window: two holders of one permit. (The
// design's rule: a rollback removes only what its own round wrote and
// nobody has re-confirmed.)
func TestReview98FailedAcquireOfAHeldIDFreesIt(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r98:retry")
	s0.mustTrySet(1)
	x, y := r98ID(), r98ID()
	granted := time.Now()
	s0.mustAcquire(2900, x) // max_ttl is 3s here
	for i := range 5 {
		e.toxicOn(1, i, "slow", "latency", "upstream", 1, `{"latency":170}`)
	}
	v, err := s1.acquire(2900, x)
	e.clearToxics()
	if r98Granted(v, err) {
		t.Skipf("the second acquire of X was granted: %s", r98Show(v, err))
	}
	t.Logf("tryAcquire(X) again via the slow replica = %s", r98Show(v, err))
	time.Sleep(500 * time.Millisecond) // the delayed writes land
	v, err = s0.acquire(2900, y)
	if at := time.Since(granted); r98Granted(v, err) && at < 2800*time.Millisecond {
		t.Fatalf("a 1-permit semaphore granted Y %v into X's 2.9s lease (X was never released): two holders", at.Round(time.Millisecond))
	}
	t.Logf("Y = %s", r98Show(v, err))
}

// TestReview98FailedShorteningUpdateLeaseTime: X holds the only permit for
// 30s; updateLeaseTime(X, 1s) fails (three of five backends stopped). The
// two live nodes shortened X at once and the three stopped ones run the
// queued "lease" when they wake: a shortening is the holder giving back
// part of its window, as a release gives back all of it, and one that
// failed may have been applied (README: the holder counts on the shorter
// window). helper-98 found Y granted 2.5s into X's 30s window; that is the
// contract now, and what must hold is that nobody gets the permit inside
// the shorter window.
func TestReview98FailedShorteningUpdateLeaseTime(t *testing.T) {
	sleepBound(t)
	h := harness.New(t, 5, nil)
	s := &r98Sem{t: t, c: h.Client(), name: "r98:shorten"}
	s.mustTrySet(1)
	x := r98ID()
	s.mustAcquire(30000, x)
	for _, b := range h.Backend[2:] {
		b.Pause()
	}
	sent := time.Now()
	v, err := s.updateLease(x, 1000)
	for _, b := range h.Backend[2:] {
		b.Resume()
	}
	if err == nil && v == int64(1) {
		t.Fatalf("updateLeaseTime was granted with 3/5 stopped")
	}
	t.Logf("updateLeaseTime(X, 1s) with 3/5 stopped = %s", r98Show(v, err))
	for time.Since(sent) < 900*time.Millisecond {
		if v, err := s.acquire(30000, r98ID()); r98Granted(v, err) {
			t.Fatalf("a 1-permit semaphore granted Y %v after X's failed updateLeaseTime(1s)", time.Since(sent).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// r98Replicas is a fault environment's two replicas, and semaphore name
// through each.
func r98Replicas(t *testing.T, name string) (*faultEnv, *r98Sem, *r98Sem) {
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	var s [2]*r98Sem
	for i, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 10 * time.Second})
		t.Cleanup(func() { c.Close() })
		s[i] = &r98Sem{t: t, c: c, name: name}
	}
	return e, s[0], s[1]
}

// r98RaceRetry sends tryAcquire(x, leaseMS) through replica 0, whose
// links to backends 2-4 are slow (170 ms), and the same command 20 ms
// later through replica 1 (a client's retry); it answers the retry's
// reply, and the first try's on first.
func r98RaceRetry(e *faultEnv, s0, s1 *r98Sem, x string, leaseMS int64) (<-chan string, any, error) {
	for i := 2; i < 5; i++ {
		e.toxicOn(0, i, "slow", "latency", "upstream", 1, `{"latency":170}`)
	}
	clock := time.Now().UnixMilli()
	args := []any{1, clock + leaseMS, clock, "922337203685477", "PUBLISH", x}
	keys := []string{s0.name, s0.timeouts(), s0.channel()}
	first := make(chan string, 1)
	go func() {
		v, err := s0.eval(context.Background(), r98Acquire, keys, args...)
		first <- r98Show(v, err)
	}()
	time.Sleep(20 * time.Millisecond)
	v, err := s1.eval(context.Background(), r98Acquire, keys, args...)
	return first, v, err
}

// r98Dump shows each backend's slots of semaphore name (the hash fields
// "s<slot>" -> id), for the failure message.
func r98Dump(t *testing.T, e *faultEnv, name string) string {
	var b strings.Builder
	for i, r := range e.redis {
		m, err := r.Client().HGetAll(context.Background(), quorum.SemaphoreKey(name)).Result()
		fmt.Fprintf(&b, "\n  backend %d: ", i)
		if err != nil {
			fmt.Fprint(&b, err)
			continue
		}
		var fs []string
		for f, v := range m {
			if strings.HasPrefix(f, "s") {
				fs = append(fs, f+"="+v[:6])
			}
		}
		slices.Sort(fs)
		fmt.Fprintf(&b, "p=%s %v", m["p"], fs)
	}
	return b.String()
}

// TestReview98UpdateLeaseTimeCountsAnotherSlot: an extend (updateLeaseTime)
// counts every node that holds the id, whatever slot it holds there; the
// grant's safety rests on a quorum of nodes holding the id in ONE slot.
// Between a grant and the give-back of the nodes that gave the id another
// slot (which waits for the round's stragglers), updateLeaseTime can be
// granted by a quorum that is not the slot's: then the slot lapses on a
// majority while the client holds its extended window, and two more ids
// get the semaphore's two permits.
//
// Five backends A-E, two replicas, a 2-permit semaphore. Set-up (partial
// releases, each a link that drops what is sent, as a partition does): V
// holds slot a on A, B, C only; W holds slot b on D only. Then, with E's
// link dropping everything (a straggler): X is granted (lease 1s) slot b
// by A, B, C (their only free slot); D gave it slot a, to be given back
// once E's answer is given up. Now, with A's link dropping everything,
// updateLeaseTime(X, 2.9s), sent through replica 1 (within one replica it
// would wait for X's round to settle), is answered 1 by B, C (slot b) and
// D (slot a).
// The give-back then frees D; X's first lease lapses on A. Y and Z are
// both granted while X's extended window runs: three holders, 2 permits.
func TestReview98UpdateLeaseTimeCountsAnotherSlot(t *testing.T) {
	sleepBound(t)
	e := newFaultEnv(t)
	// A round waits up to half a lease for a backend (1s at most), as the
	// harness's tests do: the give-back of X's other slot runs once the
	// round's wait for E ends.
	addrs, _ := e.replicas(t, func(c *config.Config) { c.NodeTimeout, c.TimeoutFactor = time.Second, 0.5 }, nil)
	c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer c.Close()
	c1 := redis.NewClient(&redis.Options{Addr: addrs[1], MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer c1.Close()
	s := &r98Sem{t: t, c: c, name: "r98:split"}
	s1 := &r98Sem{t: t, c: c1, name: "r98:split"} // the same client's second connection, through replica 1
	s.mustTrySet(2)
	drop := func(nodes ...int) {
		for _, i := range nodes {
			e.toxic(i, "drop", "timeout", "upstream", 1, `{"timeout":0}`)
		}
	}
	heal := func() { e.clearToxics(); waitUsable(t, addrs[0]); waitUsable(t, addrs[1]) }
	v, w, x, y, z := r98ID(), r98ID(), r98ID(), r98ID(), r98ID()
	t1 := time.Now()
	s.mustAcquire(2900, v)
	s.mustAcquire(2900, w)
	drop(0, 1, 2) // release V lands on D, E only
	r, err := s.release(v)
	t.Logf("release(V) with A, B, C cut off = %s", r98Show(r, err))
	heal()
	drop(3) // release W lands on A, B, C, E
	r, err = s.release(w)
	t.Logf("release(W) with D cut off = %s", r98Show(r, err))
	heal()
	t.Logf("set-up after %v:%s", time.Since(t1).Round(time.Millisecond), r98Dump(t, e, s.name))

	drop(4) // E: a straggler; the give-back waits for it
	s.mustAcquire(1000, x)
	t.Logf("X granted (lease 1s):%s", r98Dump(t, e, s.name))
	drop(0) // A cut off for the extend
	t4 := time.Now()
	r, err = s1.updateLease(x, 2900)
	if err != nil || r != int64(1) {
		// B and C hold X in one slot, D in another: no quorum holds it in
		// one slot, so the extend is refused (it was granted on c9ed6f1).
		t.Logf("updateLeaseTime(X) = %s: refused, as it must be", r98Show(r, err))
		return
	}
	t.Logf("updateLeaseTime(X, 2.9s) = 1: X's window now ends %v after t4", 2900*time.Millisecond)
	time.Sleep(600 * time.Millisecond) // the give-back runs once E is given up (500ms)
	heal()
	if wait := max(time.Until(t1.Add(3000*time.Millisecond)), time.Until(t4.Add(1100*time.Millisecond))); wait > 0 {
		time.Sleep(wait) // V's and W's leases (2.9s) over; X's first lease (1s) over on A
	}
	t.Logf("before Y and Z, %v into X's extended window:%s", time.Since(t4).Round(time.Millisecond), r98Dump(t, e, s.name))
	ry, erry := s.acquire(2000, y)
	rz, errz := s.acquire(2000, z)
	at := time.Since(t4)
	t.Logf("Y = %s, Z = %s, %v into X's 2.9s window", r98Show(ry, erry), r98Show(rz, errz), at.Round(time.Millisecond))
	if r98Granted(ry, erry) && r98Granted(rz, errz) && at < 2800*time.Millisecond {
		t.Fatalf("2-permit semaphore: X (extended by updateLeaseTime, window until +2.9s), Y and Z all hold permits %v into X's window:%s",
			at.Round(time.Millisecond), r98Dump(t, e, s.name))
	}
}

// TestReview98RollingRestartLosesThePermits: a 2-permit semaphore over five
// backends, quarantine on. The backends are restarted one at a time, each
// only after the one before is back and out of quarantine (a rolling
// upgrade: a majority up and intact throughout). Each restarted backend
// comes back without the semaphore's number of permits, and nothing puts
// it back from the others (fencing counters are repaired from a majority;
// the permits are not). After the third, no majority has the number: the
// semaphore has 0 permits, getPermits says 0, and every acquire is refused
// for good (Redisson's acquire() waits forever), though no client changed
// it.
func TestReview98RollingRestartLosesThePermits(t *testing.T) {
	sleepBound(t)
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer c.Close()
	s := &r98Sem{t: t, c: c, name: "r98:rolling"}
	s.mustTrySet(2)
	for i := range 3 {
		e.redis[i].Restart()
		waitUsable(t, addrs[0])
		id := r98ID()
		v, err := s.acquire(2000, id)
		total, _ := s.eval(context.Background(), r98Total, []string{s.name, s.timeouts(), s.channel()}, time.Now().UnixMilli(), "PUBLISH")
		t.Logf("after restarting backend %d: tryAcquire = %s, getPermits = %v", i, r98Show(v, err), total)
		if !r98Granted(v, err) {
			t.Fatalf("after a rolling restart of backends 0-%d (each back and out of quarantine before the next), "+
				"a 2-permit semaphore with no permit held refuses tryAcquire: %s; getPermits = %v", i, r98Show(v, err), total)
		}
		_, _ = s.release(id)
	}
}

// TestReview98RetryAcrossReplicasLosesThePermit: the permit version of the
// suite's retryAcrossReplicas (a lock's retry through another replica
// must survive the first try's rollback). A 1-permit semaphore; a client
// sends tryAcquire(X, lease 2.9s) through replica 0, whose links to
// backends 2-4 are slow (170ms); it resends the same command (the same
// ids and arguments, as Redisson's retry does) through replica 1 20ms
// later and is granted. Replica 0's round then fails (2/5 in time) and its
// rollback "drop X" runs on all five, deleting the permit the retry was
// granted. A second client is then granted the one permit inside X's
// window.
func TestReview98RetryAcrossReplicasLosesThePermit(t *testing.T) {
	sleepBound(t)
	e, s0, s1 := r98Replicas(t, "r98:retry2")
	s1.mustTrySet(1)
	x, y := r98ID(), r98ID()
	first, v, err := r98RaceRetry(e, s0, s1, x, 2900)
	granted := time.Now()
	t.Logf("the retry through replica 1 = %s", r98Show(v, err))
	if !r98Granted(v, err) {
		t.Skip("the retry was not granted")
	}
	t.Logf("the first try through replica 0 = %s", <-first)
	e.clearToxics()
	time.Sleep(400 * time.Millisecond)
	v, err = s1.acquire(2900, y)
	if at := time.Since(granted); r98Granted(v, err) && at < 2800*time.Millisecond {
		t.Fatalf("a 1-permit semaphore granted Y %v after X's retry was granted (lease 2.9s, never released): two holders", at.Round(time.Millisecond))
	}
	t.Logf("Y = %s", r98Show(v, err))
}

// TestReview98RestartedMajorityQuarantined (held): X holds the one permit
// (2.9s); backends 0-2 restart empty; the application sets the semaphore
// up again (trySetPermits puts the number back on the restarted three).
// Until X's window ends no other id may be granted: the restarted three
// are in quarantine.
func TestReview98RestartedMajorityQuarantined(t *testing.T) {
	sleepBound(t)
	e := newFaultEnv(t)
	addrs, _ := e.replicas(t, nil, nil)
	c := redis.NewClient(&redis.Options{Addr: addrs[0], MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer c.Close()
	s := &r98Sem{t: t, c: c, name: "r98:restart"}
	s.mustTrySet(1)
	x := r98ID()
	granted := time.Now()
	s.mustAcquire(2900, x)
	for i := range 3 {
		e.redis[i].Restart()
	}
	tries, refused := 0, 0
	for time.Since(granted) < 2800*time.Millisecond {
		v, err := s.trySet(1)
		t.Logf("trySetPermits(1) after the restarts = %s", r98Show(v, err))
		v, err = s.acquire(2000, r98ID())
		tries++
		if r98Granted(v, err) {
			t.Fatalf("Y granted %v into X's 2.9s window after backends 0-2 restarted empty", time.Since(granted).Round(time.Millisecond))
		}
		refused++
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d tries inside X's window, %d refused", tries, refused)
}
