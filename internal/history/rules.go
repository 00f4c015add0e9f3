package history

import (
	"sort"
	"time"
)

// check runs every rule on one key.
func (k *keyHistory) check(opts Options) []Anomaly {
	var out []Anomaly
	if !opts.AllowLate {
		out = append(out, k.late()...)
	}
	out = append(out, k.overlaps()...)
	out = append(out, k.lockDelays()...)
	out = append(out, k.tokens()...)
	out = append(out, k.answers()...)
	return out
}

// late: an OK acquire that returned after the window it granted had ended.
func (k *keyHistory) late() []Anomaly {
	var out []Anomaly
	for _, h := range k.holds {
		op := k.ops[h.grant]
		if op.Outcome == OK && op.TTL > 0 && op.Return >= op.Invoke+op.TTL {
			out = append(out, k.anomaly("late", []int{h.grant}, "%s granted at %s for %s from %s: its window was over",
				h.owner, d(op.Return), d(op.TTL), d(op.Invoke)))
		}
	}
	return out
}

// overlaps: two owners' windows that intersect, unless both are shared (a
// read-write lock's readers). A sweep by start keeps, over all windows and
// over the exclusive ones, the window ending last and the one ending last
// among other owners, so every exclusive window is compared with the
// longest-lived window of another owner, and every shared one with the
// longest-lived exclusive one.
func (k *keyHistory) overlaps() []Anomaly {
	ws := append([]window(nil), k.windows...)
	sort.SliceStable(ws, func(a, b int) bool { return ws[a].start < ws[b].start })
	var out []Anomaly
	owner := func(n int) string { return k.holds[ws[n].hold].owner }
	shared := func(n int) bool { return k.ops[k.holds[ws[n].hold].grant].Shared }
	all, excl := sweep{-1, -1}, sweep{-1, -1}
	for n, w := range ws {
		against := excl.against(ws, owner, n)
		if !shared(n) {
			against = all.against(ws, owner, n)
		}
		if against >= 0 {
			a := ws[against]
			out = append(out, k.anomaly("overlap", []int{a.op, w.op}, "%s holds from %s while %s holds until %s (%s inside)",
				owner(n), d(w.start), owner(against), endString(a.end), d(min(a.end, w.end)-w.start)))
		}
		all.add(ws, owner, n)
		if !shared(n) {
			excl.add(ws, owner, n)
		}
	}
	return out
}

// sweep is the window ending last so far and the one ending last among
// other owners than its (indexes into the windows by start).
type sweep struct{ best, other int }

// against is a window of the sweep, of another owner than window n's, that
// n starts inside, or -1.
func (s sweep) against(ws []window, owner func(int) string, n int) int {
	switch {
	case s.best >= 0 && owner(s.best) != owner(n) && ws[n].start < ws[s.best].end:
		return s.best
	case s.other >= 0 && owner(s.other) != owner(n) && ws[n].start < ws[s.other].end:
		return s.other
	}
	return -1
}

func (s *sweep) add(ws []window, owner func(int) string, n int) {
	switch {
	case s.best < 0 || ws[n].end > ws[s.best].end:
		if s.best >= 0 && owner(s.best) != owner(n) {
			s.other = s.best
		}
		s.best = n
	case owner(s.best) != owner(n) && (s.other < 0 || ws[n].end > ws[s.other].end):
		s.other = n
	}
}

func endString(t time.Duration) string {
	if t == forever {
		return "its release"
	}
	return d(t)
}

// lockDelays: an owner granted within the lock-delay of a lock that expired
// unreleased. Certain only when the earlier lock was granted OK and its
// owner asked for no lock again (its delay and expiry would be open), and
// when the later grant was sent after the earlier one returned, returned before the earliest end of the delay (the lock's
// last window end plus its Delay), and no release of the earlier lock was
// sent before it returned.
func (k *keyHistory) lockDelays() []Anomaly {
	var out []Anomaly
	for _, a := range k.holds {
		ga := k.ops[a.grant]
		if ga.Delay <= 0 || ga.Outcome != OK || len(a.windows) == 0 {
			continue
		}
		var expiry = a.windows[0].end
		for _, w := range a.windows {
			expiry = max(expiry, w.end)
		}
		if expiry == forever {
			continue
		}
		for _, b := range k.holds {
			gb := k.ops[b.grant]
			if b.owner == a.owner || gb.Outcome != OK || gb.Invoke <= ga.Return || ga.Shared && gb.Shared {
				continue
			}
			if gb.Return >= expiry && gb.Return < expiry+ga.Delay && !k.mayHaveReleased(a.owner, ga.Invoke, gb.Return) && !k.reacquired(a.owner, ga.Invoke, gb.Return) {
				out = append(out, k.anomaly("lock-delay", []int{a.grant, b.grant}, "%s granted at %s, %s after %s's lock expired unreleased (delay %s)",
					b.owner, d(gb.Return), d(gb.Return-expiry), a.owner, d(ga.Delay)))
			}
		}
	}
	return out
}

// mayHaveReleased reports whether owner sent a release that may have taken
// effect (any answer but not held) after from and before to: a later
// acquire by the same owner may not have taken effect, so every release of
// the owner counts, not only those of one hold.
func (k *keyHistory) mayHaveReleased(owner string, from, to time.Duration) bool {
	for _, j := range k.byOwner[owner] {
		if o := k.ops[j]; o.Kind == Release && o.Outcome != NotHeld && o.Invoke > from && o.Invoke < to {
			return true
		}
	}
	return false
}

// reacquired reports whether owner sent another acquire between from and to.
func (k *keyHistory) reacquired(owner string, from, to time.Duration) bool {
	for _, j := range k.byOwner[owner] {
		if o := k.ops[j]; o.Kind == Acquire && o.Invoke > from && o.Invoke < to {
			return true
		}
	}
	return false
}
