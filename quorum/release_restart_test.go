package quorum

import (
	"errors"
	"testing"
	"time"
)

// TestReleaseAfterRestartIsNotNotHeld: a lock whose copies are left on exactly
// a quorum (3 of 5), then one of its nodes restarts empty. Inside the lock's window
// its owner releases: two nodes delete it, the two that never had it and the
// restarted one answer "absent". The restarted node cannot vouch that the
// lock was not there (it lost its keys), so its "absent" must not turn the
// owner's release into "not held" (found by the nemesis, seed 2412): the
// honest answer is NOQUORUM, and never ErrNotHeld to the holder. The
// same for an extend.
func TestReleaseAfterRestartIsNotNotHeld(t *testing.T) {
	fs, nodes := fakes(5)
	e := newEngine(t, nodes)
	if _, err := e.Acquire(t.Context(), "k", "v", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grant's writes all landed", func() bool {
		for _, f := range fs {
			if _, held := f.get("k"); !held {
				return false
			}
		}
		return true
	})
	for _, f := range fs[3:] { // the copies the grant did not need: gone
		f.mu.Lock()
		delete(f.data, "k")
		f.mu.Unlock()
	}
	fs[0].restart(false)
	waitFor(t, "node0 in restart quarantine", func() bool { return !e.counts(0, time.Now()) })
	if _, err := e.Extend(t.Context(), "k", "v", 10*time.Second); errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Extend by the holder after a restart = %v; want NOQUORUM", err)
	}
	if _, err := e.Extend(t.Context(), "k", "other", 10*time.Second); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend by a non-holder = %v; want ErrNotHeld", err)
	}
	err := e.Release(t.Context(), "k", "v")
	if errors.Is(err, ErrNotHeld) || err == nil {
		t.Fatalf("Release by the holder after a restart = %v; want NOQUORUM (a restarted node's absence proves nothing)", err)
	}
	if !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Release = %v; want ErrNoQuorum", err)
	}
	waitFor(t, "the release's deletes landed", func() bool {
		_, held1 := fs[1].get("k")
		_, held2 := fs[2].get("k")
		return !held1 && !held2
	})
	// A release by someone who never held it still hears "not held": the
	// intact nodes alone say so.
	if err := e.Release(t.Context(), "k2", "x"); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release of a lock nobody holds = %v; want ErrNotHeld", err)
	}
}

// TestReadAfterRestartIsNotAbsent: the same thinned lock (copies on two of
// five nodes, a third restarted empty) read by quorum: the restarted node's
// "absent" proves nothing, so the read (GET, PTTL, LOCK.TOKEN) answers
// NOQUORUM, not "no such lock" to its holder (the nemesis's 30-minute soak,
// seed 3001: LOCK.TOKEN answered nil to a holder inside its window).
func TestReadAfterRestartIsNotAbsent(t *testing.T) {
	fs, nodes := fakes(5)
	e := newEngine(t, nodes)
	if _, err := e.Acquire(t.Context(), "k", "v", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grant's writes all landed", func() bool {
		for _, f := range fs {
			if _, held := f.get("k"); !held {
				return false
			}
		}
		return true
	})
	for _, f := range fs[3:] {
		f.mu.Lock()
		delete(f.data, "k")
		f.mu.Unlock()
	}
	fs[0].restart(false)
	waitFor(t, "node0 in restart quarantine", func() bool { return !e.counts(0, time.Now()) })
	for name, read := range map[string]func() (Entry, error){
		"Read":    func() (Entry, error) { return e.Read(t.Context(), "k") },
		"TokenOf": func() (Entry, error) { return e.TokenOf(t.Context(), "k") },
	} {
		v, err := read()
		if err == nil && !v.Found {
			t.Fatalf("%s of a lock held on 2 intact nodes and a restarted one = not found; want NOQUORUM", name)
		}
		if err != nil && !errors.Is(err, ErrNoQuorum) {
			t.Fatalf("%s = %v; want NOQUORUM", name, err)
		}
	}
	// A lock nobody holds still reads as absent from the intact nodes.
	if v, err := e.Read(t.Context(), "nobody"); err != nil || v.Found {
		t.Fatalf("Read of a free key = %+v, %v; want not found", v, err)
	}
}
