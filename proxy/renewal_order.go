package proxy

import (
	"slices"
	"sync"
	"time"
)

// fairOrder orders a renewal round's due locks: each user's own locks by
// deadline (the end of their window, nearest first), the users taken in
// turns, the user with the nearest deadline first. One user's thousands of
// locks thus queue behind its own, and each other user's most urgent lock
// is among the first few of the round: in the first script every backend
// runs (quorum.Renew sends them in this order, each batch with its own
// deadline).
func fairOrder(due []*sessionLock) []*sessionLock {
	byUser := map[string][]*sessionLock{}
	var users []string
	for _, l := range due {
		if byUser[l.user] == nil {
			users = append(users, l.user)
		}
		byUser[l.user] = append(byUser[l.user], l)
	}
	if len(users) == 1 {
		slices.SortFunc(due, func(a, b *sessionLock) int { return a.until.Compare(b.until) })
		return due
	}
	for _, u := range users {
		slices.SortFunc(byUser[u], func(a, b *sessionLock) int { return a.until.Compare(b.until) })
	}
	slices.SortFunc(users, func(a, b string) int { return byUser[a][0].until.Compare(byUser[b][0].until) })
	out := make([]*sessionLock, 0, len(due))
	for i := 0; len(out) < len(due); i++ {
		for _, u := range users {
			if i < len(byUser[u]) {
				out = append(out, byUser[u][i])
			}
		}
	}
	return out
}

// lossLogEvery is the least time between two log lines about lost session
// locks: a flood of losses is a count in one line, not a line each.
const lossLogEvery = 10 * time.Second

// lossLog rate-limits the session-lost warnings.
type lossLog struct {
	mu    sync.Mutex
	last  time.Time
	quiet int // losses not logged since last
}

// due reports whether a loss may be logged now, and how many were not
// logged before it.
func (ll *lossLog) due(now time.Time) (bool, int) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if !ll.last.IsZero() && now.Sub(ll.last) < lossLogEvery {
		ll.quiet++
		return false, 0
	}
	quiet := ll.quiet
	ll.last, ll.quiet = now, 0
	return true, quiet
}
