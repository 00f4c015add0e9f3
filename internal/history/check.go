package history

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Options tune Check.
type Options struct {
	// AllowLate accepts an OK that returned after the window it granted had
	// ended (Return >= Invoke+TTL): a request that waited in a stopped
	// replica's socket buffer is read, and timed, only when it runs again.
	AllowLate bool
}

// Anomaly is one breach of the contract, with the ops (indexes into the
// history Check was given) that show it.
type Anomaly struct {
	Kind string `json:"kind"` // overlap, late, token-backwards, two-tokens, lock-delay, extend-not-owner, release-not-owner, ...
	Key  string `json:"key"`
	Ops  []int  `json:"ops"`
	Msg  string `json:"msg"`
}

func (a Anomaly) String() string {
	return fmt.Sprintf("%s on %s: %s (ops %v)", a.Kind, a.Key, a.Msg, a.Ops)
}

// Result is Check's verdict on a whole history.
type Result struct {
	Ops       int       `json:"ops"`  // ops checked
	Keys      int       `json:"keys"` // distinct keys
	Holds     int       `json:"holds"`
	Anomalies []Anomaly `json:"anomalies"`
}

// OK reports whether the history met the contract.
func (r Result) OK() bool { return len(r.Anomalies) == 0 }

// Verdict is a one-line summary, such as "1234 ops, 0 anomalies".
func (r Result) Verdict() string {
	if r.OK() {
		return fmt.Sprintf("%d ops, %d holds: linear", r.Ops, r.Holds)
	}
	kinds := map[string]int{}
	for _, a := range r.Anomalies {
		kinds[a.Kind]++
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(ks)
	return fmt.Sprintf("%d ops, %d holds: %d anomalies (%s)", r.Ops, r.Holds, len(r.Anomalies), strings.Join(ks, ", "))
}

// Check checks a whole history against the contract of a lock with fencing
// (DESIGN.md, the client's window): per key, no two owners inside their
// windows at once, no grant inside a lock-delay, tokens that only go up and
// one token per lock, and extend, release and token answers that agree with
// who held the lock. Every judgement is made only where the history makes it
// certain (see doc.go), so timing uncertainty never raises a false alarm.
func Check(ops []Op, opts Options) Result {
	res := Result{Ops: len(ops)}
	byKey := map[string][]int{}
	var keys []string
	for i, op := range ops {
		if _, ok := byKey[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		byKey[op.Key] = append(byKey[op.Key], i)
	}
	sort.Strings(keys)
	res.Keys = len(keys)
	for _, key := range keys {
		k := newKeyHistory(ops, key, byKey[key])
		res.Holds += len(k.holds)
		res.Anomalies = append(res.Anomalies, k.check(opts)...)
	}
	return res
}

// window is one stretch during which an owner certainly held a key: from
// the Return of the OK that granted or extended it to the earliest moment it
// may have ended (Invoke+TTL, or an Invoke of its owner's release or extend).
type window struct {
	hold       int // index into keyHistory.holds
	op         int // the granting or extending op
	start, end time.Duration
}

// hold is one lock: an owner's OK acquire and what followed it up to the
// owner's next acquire.
type hold struct {
	owner   string
	grant   int   // the acquire op
	ops     []int // the owner's later ops on the key, up to its next acquire
	token   int64 // the lock's token, 0 if never answered
	tokenOp int
	windows []window
}

func d(t time.Duration) string { return t.Round(time.Millisecond).String() }
