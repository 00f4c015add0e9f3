package quorum

import (
	"context"
	"strings"
	"testing"
	"time"
)

// MarkNew implements Node.
func (f *fakeNode) MarkNew(ctx context.Context, marker string, seed int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if f.marker != "" || f.record > 0 {
		return ErrNotNew
	}
	f.floorLocked(seed)
	f.marker = marker
	return nil
}

// freshFakes are n nodes just started: young, unmarked, never seen.
func freshFakes(n int) ([]*fakeNode, []Node) {
	fs, ns := fakes(n)
	unmark(fs...)
	for _, f := range fs {
		f.info.Uptime = time.Second
	}
	return fs, ns
}

// Bootstrap marks fresh nodes and seeds their token counters from the
// wall clock; it never marks a deployment twice, nor nodes a replica has
// seen, nor old ones, nor with one node silent, and then marks none.
func TestBootstrapIsAOneTimeAct(t *testing.T) {
	fs, ns := freshFakes(3)
	before := CounterSeed(time.Now())
	done, err := Bootstrap(t.Context(), ns, time.Minute)
	if err != nil || len(done) != 3 {
		t.Fatalf("fresh nodes: %v, %v", done, err)
	}
	for _, f := range fs {
		if MarkerRun(f.marker) != f.info.RunID || f.counter(TokenKey) < before {
			t.Fatalf("%s: marker %q, token counter %d; want its run and at least %d", f.name, f.marker, f.counter(TokenKey), before)
		}
	}
	if _, err := Bootstrap(t.Context(), ns, time.Minute); err == nil || !strings.Contains(err.Error(), "never bootstrapped again") {
		t.Fatalf("a second bootstrap = %v; want refused", err)
	}

	for name, spoil := range map[string]func(f []*fakeNode){
		"seen by a replica": func(f []*fakeNode) { f[1].record = time.Minute },
		"older than window": func(f []*fakeNode) { f[2].info.Uptime = time.Hour },
		"one silent":        func(f []*fakeNode) { f[0].infoErr = errRefused },
		"one marked":        func(f []*fakeNode) { f[2].marker = "run-old" },
	} {
		fs, ns := freshFakes(3)
		spoil(fs)
		if _, err := Bootstrap(t.Context(), ns, time.Minute); err == nil {
			t.Fatalf("%s: bootstrap succeeded", name)
		}
		for _, f := range fs {
			if f.marker != "" && f.marker != "run-old" {
				t.Fatalf("%s: a refused bootstrap marked %s", name, f.name)
			}
		}
	}
}

// A replica that quarantined a restarted node ends that quarantine only by
// its own clock: a marker that appears on the node for its current run
// (another replica's bootstrap, anyone's write) does not end it.
func TestQuarantineEndsOnlyByOwnClock(t *testing.T) {
	fs, nodes := fakes(5)
	e := newEngine(t, nodes, WithMaxTTL(time.Minute), WithHealthInterval(10*time.Millisecond))
	fs[0].restart(false)
	if e.counts(0, time.Now()) {
		t.Fatal("the restarted node counts at once")
	}
	fs[0].mu.Lock()
	fs[0].marker = fs[0].info.RunID
	fs[0].mu.Unlock()
	eventuallyTrue(t, func() bool { return e.health[0].isIntact() }) // the marker was read
	if _, err := e.Acquire(t.Context(), "k", "v", time.Second); err != nil {
		t.Fatal(err) // four others make a quorum
	}
	if why := e.quarantineLeft(0, time.Now()); !strings.Contains(why, "quarantined for") {
		t.Fatalf("a marker ended the quarantine of the restarted node: %q", why)
	}
}

// Every node found unmarked (a new deployment, or one wiped whole) is
// marked with its token counter seeded from the wall clock: tokens after a
// total wipe stay above those before it.
func TestWipedDeploymentIsSeededFromTheClock(t *testing.T) {
	fs, nodes := fakes(3)
	unmark(fs...)
	e := newEngine(t, nodes, WithMaxTTL(time.Second), WithNodeTimeout(250*time.Millisecond), WithTimeoutFactor(0.5), WithHealthInterval(10*time.Millisecond))
	eventuallyTrue(t, func() bool { return e.allIntact() })
	acquire := func(key string) Grant {
		var g Grant
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if g, err = e.AcquireFenced(t.Context(), key, "a", time.Second); err == nil {
				return g
			}
		}
		t.Fatalf("no grant of %s in 10s: %v", key, err)
		return g
	}
	g := acquire("k")
	if seed := CounterSeed(time.Now()); g.Token < seed-60_000*SeedPerMs {
		t.Fatalf("first token %d; want it seeded from the clock (about %d)", g.Token, seed)
	}
	for _, f := range fs {
		f.restart(false)
	}
	if after := acquire("k2"); after.Token <= g.Token {
		t.Fatalf("token after a total wipe %d, before %d", after.Token, g.Token)
	}
}
