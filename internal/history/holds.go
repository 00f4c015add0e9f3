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
// of [from, to], or -1.
func (k *keyHistory) coveredBy(owner string, from, to time.Duration) int {
	for n, w := range k.windows {
		if w.start <= from && to <= w.end && k.holds[w.hold].owner != owner {
			return n
		}
	}
	return -1
}

func (k *keyHistory) anomaly(kind string, ops []int, format string, args ...any) Anomaly {
	return Anomaly{Kind: kind, Key: k.key, Ops: ops, Msg: fmt.Sprintf(format, args...)}
}
