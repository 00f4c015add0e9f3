package proxy

import "sync"

// Per-user budgets: what all the connections of one user may make the
// proxy keep and work for at once (patterns to match, session locks to
// renew, waiters to beat), so that one tenant's load is bounded by its own
// budget, not by the proxy's. A limit of 0 means no limit.

type quotaKind int

const (
	qPatterns     quotaKind = iota // patterns (PSUBSCRIBE) of the user's connections
	qPatternBytes                  // their total length
	qSessions                      // session locks booked or being acquired
	qWaiters                       // LOCK.ACQUIRE ... WAIT requests parked
	qKinds
)

type quotaUse [qKinds]int

// quotas counts each user's use; safe for concurrent use.
type quotas struct {
	mu   sync.Mutex
	used map[string]*quotaUse
}

// take adds want to user's use if that stays within limits (0: none),
// and reports whether it did.
func (q *quotas) take(user string, want, limits quotaUse) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.used[user]
	if u == nil {
		u = &quotaUse{}
	}
	for k := range want {
		if want[k] > 0 && limits[k] > 0 && u[k]+want[k] > limits[k] {
			return false
		}
	}
	for k := range want {
		u[k] += want[k]
	}
	if q.used == nil {
		q.used = map[string]*quotaUse{}
	}
	q.used[user] = u
	return true
}

// give returns what take added.
func (q *quotas) give(user string, back quotaUse) {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.used[user]
	if u == nil {
		return
	}
	zero := true
	for k := range back {
		u[k] = max(0, u[k]-back[k])
		zero = zero && u[k] == 0
	}
	if zero {
		delete(q.used, user)
	}
}

// userName names the user whose budget a session draws on.
func (c *session) userName() string {
	if c.user == nil {
		return "default"
	}
	return c.user.Name
}
