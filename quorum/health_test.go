package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A holds k on three of five nodes; one of them restarts empty. Without
// quarantine B wins a majority while A still holds the lock: the failure
// restart quarantine exists for.
func TestQuarantineKeepsRestartedNodeFromVoting(t *testing.T) {
	for _, quarantine := range []bool{true, false} {
		fs, nodes := fakes(5)
		e := newEngine(t, nodes, WithQuarantine(quarantine))
		if _, err := e.Acquire(t.Context(), "k", "A", time.Minute); err != nil {
			t.Fatal(err)
		}
		for holders(fs, "k", "A") != 5 {
			time.Sleep(time.Millisecond)
		}
		for _, f := range fs[3:] { // A's value stays on 0, 1, 2 only
			f.mu.Lock()
			delete(f.data, "k")
			f.mu.Unlock()
		}
		fs[0].restart(false)

		_, err := e.Acquire(t.Context(), "k", "B", time.Minute)
		if !quarantine {
			if err != nil {
				t.Fatalf("without quarantine the second owner should (unsafely) win, got %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "node0: quarantined") {
			t.Fatalf("with quarantine: Acquire by B = %v; want NOQUORUM naming node0 as quarantined", err)
		}
		if n := holders(fs, "k", "B"); n != 0 {
			t.Fatalf("B's failed round left its value on %d nodes (the quarantined one included?)", n)
		}
		if got := e.Status()[0].Quarantined; got <= 0 {
			t.Fatalf("Status shows no quarantine for the restarted node: %v", got)
		}
	}
}

func TestQuarantineAtStartForYoungBackends(t *testing.T) {
	fs, nodes := fakes(5)
	unmark(fs[:2]...)
	for _, f := range fs[:2] {
		f.info.Uptime = time.Second // younger than max_ttl
	}
	e := newEngine(t, nodes, WithMaxTTL(time.Minute))
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); err != nil {
		t.Fatalf("three seasoned nodes should suffice: %v", err)
	}
	fs[2].setFault(errRefused, 0, nil)
	if _, err := e.Acquire(t.Context(), "k2", "v", time.Second); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("two young + one broken of five = %v; want NOQUORUM", err)
	}
	if q := e.Status()[0].Quarantined; q < 50*time.Second || q > time.Minute {
		t.Fatalf("young node's quarantine = %v; want max_ttl padded, less its uptime", q)
	}
}

func TestQuarantineEnds(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes, WithMaxTTL(100*time.Millisecond), WithMinValidity(time.Millisecond), WithNodeTimeout(50*time.Millisecond))
	fs[0].restart(false)
	fs[1].restart(false)
	if _, err := e.Acquire(t.Context(), "k", "v", 100*time.Millisecond); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("two of three quarantined = %v; want NOQUORUM", err)
	}
	time.Sleep(e.QuarantineWindow() + 20*time.Millisecond)
	if _, err := e.Acquire(t.Context(), "k", "v", 100*time.Millisecond); err != nil {
		t.Fatalf("after the window the nodes count again: %v", err)
	}
}

func TestPersistentBackendIsNotQuarantined(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	eventuallyTrue(t, func() bool { return e.allIntact() }) // marked: a restart keeps the marker too
	fs[0].restart(true)
	fs[1].restart(true)
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); err != nil {
		t.Fatalf("nodes that fsync every write lose no lock on restart: %v; %+v", err, e.Status())
	}
}

func TestDownNodeIsNotWaitedOn(t *testing.T) {
	fs, nodes := fakes(5)
	fs[4].infoErr = errRefused // the health check finds it down
	fs[4].setFault(nil, 0, make(chan struct{}))
	for _, f := range fs[:2] {
		f.put("k", "other", time.Minute)
	}
	// The round needs node 4's vote. Were it sent there, it would hang
	// until the one-minute node timeout: returning at all shows it was not.
	e := newEngine(t, nodes, WithNodeTimeout(time.Minute), WithTimeoutFactor(0.5))
	_, err := e.Acquire(t.Context(), "k", "v", time.Minute)
	if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "node4: down") {
		t.Fatalf("Acquire = %v; want NOQUORUM naming node4 as down", err)
	}
	if n := fs[4].callCount("setnx"); n != 0 {
		t.Fatalf("a node known to be down was sent %d SETs", n)
	}
	if st := e.Status()[4]; st.Up || st.Err == nil {
		t.Fatalf("Status of the down node = %+v", st)
	}
	// It answers again: the monitor (backing off from 100ms) brings it back.
	fs[4].mu.Lock()
	fs[4].infoErr, fs[4].gate = nil, nil
	fs[4].mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for !e.Status()[4].Up {
		if time.Now().After(deadline) {
			t.Fatal("the node that answers again is still down after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Release(t.Context(), "k", "v"); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("release to all five = %v", err)
	}
	// The release decided on the first three answers; node 4's is a straggler
	// that holds the owner slot until it answers.
	unlock, err := e.keys.lock(t.Context(), "k", "v")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if fs[4].callCount("delifeq") == 0 {
		t.Fatal("the node back up was not sent the release")
	}
}

// A node that restarted empty lost the delay notes of the locks that
// expired on it: it must stay out until the longest lock-delay has passed
// too, and every engine must learn that from the record.
func TestQuarantineWindowIncludesLockDelay(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes, WithMaxTTL(time.Minute), WithLockDelay(time.Second, 30*time.Second))
	want := e.PaddedTTL(time.Minute) + 30*time.Second
	if got := e.QuarantineWindow(); got != want {
		t.Fatalf("quarantine window = %v; want max_ttl padded plus the longer lock-delay, %v", got, want)
	}
	eventuallyTrue(t, func() bool {
		fs[0].mu.Lock()
		defer fs[0].mu.Unlock()
		return fs[0].record == want
	})
}

// A health check that only timed out (the proxy or the backend stalled, the
// connection is fine) must not back off for seconds: the node is checked
// again soon, so a short stall costs a short outage, not up to 5 s of
// refused locks. A node that stays slow is still checked and kept down.
func TestTimedOutCheckIsRetriedSoon(t *testing.T) {
	fs, nodes := fakes(5)
	e := newEngine(t, nodes, WithHealthInterval(time.Hour))
	fs[4].mu.Lock()
	fs[4].infoErr = context.DeadlineExceeded
	fs[4].mu.Unlock()
	e.nudgeCheck(4)
	deadline := time.Now().Add(5 * time.Second)
	for e.Status()[4].Up {
		if time.Now().After(deadline) {
			t.Fatal("the node whose checks time out is still up after 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(1800 * time.Millisecond) // a stall of several checks
	if e.Status()[4].Up {
		t.Fatal("the node came up while its checks still time out")
	}
	fs[4].mu.Lock()
	fs[4].infoErr = nil
	fs[4].mu.Unlock()
	ended := time.Now()
	for !e.Status()[4].Up {
		if time.Since(ended) > 5*time.Second {
			t.Fatal("the node is still down 5s after its checks answer again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if took := time.Since(ended); took > 600*time.Millisecond {
		t.Fatalf("the node was down %v after a timeout-only stall ended; want a re-check within ~100ms", took.Round(time.Millisecond))
	}
}
