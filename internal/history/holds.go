package history

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// forever is the end of a window whose op asked for no TTL (a session lock
// held until released).
const forever = time.Duration(math.MaxInt64)

// keyHistory is one key's ops, split into holds.
type keyHistory struct {
	key      string
	ops      []Op
	idx      []int            // the key's ops, by Invoke
	byOwner  map[string][]int // each owner's ops, by Invoke
	holds    []*hold
	holdByOp map[int]*hold // the hold each non-acquire op belongs to
	windows  []window      // every hold's windows
	byStart  []int         // windows by start, for coveredBy
	last     [][2]int      // per prefix of byStart: the window ending last, and the one ending last of another owner
}

func newKeyHistory(ops []Op, key string, idx []int) *keyHistory {
	k := &keyHistory{key: key, ops: ops, idx: append([]int(nil), idx...), byOwner: map[string][]int{}, holdByOp: map[int]*hold{}}
	sort.SliceStable(k.idx, func(a, b int) bool { return ops[k.idx[a]].Invoke < ops[k.idx[b]].Invoke })
	for _, i := range k.idx {
		k.byOwner[ops[i].Owner] = append(k.byOwner[ops[i].Owner], i)
	}
	owners := make([]string, 0, len(k.byOwner))
	for o := range k.byOwner {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for _, o := range owners {
		k.splitHolds(o)
	}
	return k
}

// splitHolds makes a hold of each acquire of owner that may have taken
// effect (OK or Unknown) with the owner's ops up to its next such acquire,
// and the windows the history makes certain.
func (k *keyHistory) splitHolds(owner string) {
	mine := k.byOwner[owner]
	var cur *hold
	for n, i := range mine {
		op := k.ops[i]
		if op.Kind == Acquire && (op.Outcome == OK || op.Outcome == Unknown) {
			cur = &hold{owner: owner, grant: i}
			k.holds = append(k.holds, cur)
			if op.Outcome == OK {
				cur.token, cur.tokenOp = op.Token, i
				k.addWindow(cur, len(k.holds)-1, i, mine[n+1:])
			}
			continue
		}
		if cur == nil {
			continue
		}
		cur.ops = append(cur.ops, i)
		k.holdByOp[i] = cur
		switch {
		case op.Kind == Extend && op.Outcome == OK && !k.releasedBefore(cur, op.Invoke):
			k.addWindow(cur, len(k.holds)-1, i, mine[n+1:])
		}
	}
}

// releasedBefore reports whether h's owner was told its release succeeded
// before t.
func (k *keyHistory) releasedBefore(h *hold, t time.Duration) bool {
	for _, j := range h.ops {
		if o := k.ops[j]; o.Kind == Release && o.Outcome == OK && o.Return < t {
			return true
		}
	}
	return false
}

// addWindow adds the window op i makes certain: from its Return to its
// Invoke+TTL, cut at the Invoke of any later release of the owner that may
// have taken effect, and at Invoke+TTL of any later extend that may have
// (an extend may shorten a lock).
func (k *keyHistory) addWindow(h *hold, hi, i int, later []int) {
	op := k.ops[i]
	end := forever
	if op.TTL > 0 {
		end = op.Invoke + op.TTL
	}
	for _, j := range later {
		o := k.ops[j]
		if o.Invoke < op.Invoke || o.Outcome == NotHeld {
			continue
		}
		switch o.Kind {
		case Release:
			end = min(end, o.Invoke)
		case Extend:
			if o.TTL > 0 {
				end = min(end, o.Invoke+o.TTL)
			} else {
				end = min(end, o.Invoke)
			}
		}
	}
	if op.Return < end {
		w := window{hold: hi, op: i, start: op.Return, end: end}
		h.windows = append(h.windows, w)
		k.windows = append(k.windows, w)
	}
}

// coveredBy is a window of an owner other than owner that covers the whole
// of [from, to] strictly (it starts before from and ends after to), or -1:
// times are in whole steps, and an op whose Invoke equals a grant's Return
// may have taken effect at that same instant, just before the grant; one
// whose Return equals a window's end may have seen the lock just expire.
// The windows sorted by start carry, for each prefix,
// the one ending last and the one ending last among other owners: one of
// the two covers [from, to] if any window of another owner does.
func (k *keyHistory) coveredBy(owner string, from, to time.Duration) int {
	if k.byStart == nil {
		k.indexWindows()
	}
	i := sort.Search(len(k.byStart), func(i int) bool { return k.windows[k.byStart[i]].start >= from }) - 1
	if i < 0 {
		return -1
	}
	for _, n := range [2]int{k.last[i][0], k.last[i][1]} {
		if n >= 0 && k.windows[n].end > to && k.holds[k.windows[n].hold].owner != owner {
			return n
		}
	}
	return -1
}

func (k *keyHistory) indexWindows() {
	k.byStart = make([]int, len(k.windows))
	for i := range k.byStart {
		k.byStart[i] = i
	}
	sort.SliceStable(k.byStart, func(a, b int) bool { return k.windows[k.byStart[a]].start < k.windows[k.byStart[b]].start })
	k.last = make([][2]int, len(k.byStart))
	best, other := -1, -1
	owner := func(n int) string { return k.holds[k.windows[n].hold].owner }
	for i, n := range k.byStart {
		switch {
		case best < 0 || k.windows[n].end > k.windows[best].end:
			if best >= 0 && owner(best) != owner(n) {
				other = best
			}
			best = n
		case owner(best) != owner(n) && (other < 0 || k.windows[n].end > k.windows[other].end):
			other = n
		}
		k.last[i] = [2]int{best, other}
	}
}

func (k *keyHistory) anomaly(kind string, ops []int, format string, args ...any) Anomaly {
	return Anomaly{Kind: kind, Key: k.key, Ops: ops, Msg: fmt.Sprintf(format, args...)}
}
