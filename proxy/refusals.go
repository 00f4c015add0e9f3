package proxy

import (
	"sync"
	"sync/atomic"
	"time"
)

// Refusal back-off: a user whose requests keep running into its limits (too
// many waiters, session locks, patterns, subscriptions) is slowed, not
// answered as fast as it can ask. Each refusal draws on the user's budget of
// limit_refusals_per_user a second (a token bucket holding one second's
// worth); once the budget is spent, every connection of that user waits
// before reading its next request until it has refilled (at most a second).
// A refusal is cheap, but tens of thousands a second of them share the
// proxy's CPU with every tenant's rounds: past its budget, a user's refusals
// are queued behind its own requests instead.

// limitRefusal is the reply of a request refused for one of its user's or
// its connection's limits; writing it (request.writeErr) draws on the user's
// refusal budget.
type limitRefusal string

func (e limitRefusal) Error() string { return string(e) }

// refusalBudgets holds each user's budget; safe for concurrent use.
type refusalBudgets struct {
	perSec float64  // 0: no back-off
	users  sync.Map // user name -> *refusalBucket (a bucket per configured user)
}

type refusalBucket struct {
	mu     sync.Mutex
	tokens float64 // may go as low as -perSec: the debt is a second at most
	at     time.Time
	until  atomic.Int64 // monotonic (since refusalEpoch) before which the user's connections wait; 0: none
}

// refusalEpoch is what refusalBucket.until counts from: time.Since reads
// the monotonic clock, so a wall clock stepped back makes no one wait.
var refusalEpoch = time.Now()

// maxRefusalPause caps one wait: the debt is a second at most.
const maxRefusalPause = time.Second

// bucket is the budget a refusal on connection p of user draws on: the
// user's, or, where no users are configured (everyone is the default user,
// one application, with requirepass or without), the connection's own.
func (b *refusalBudgets) bucket(user *User, p peer) *refusalBucket {
	if user == nil || user.Name == "default" { // no users (requirepass at most): one application
		return p.refusalBucket()
	}
	v, ok := b.users.Load(user.Name)
	if !ok {
		v, _ = b.users.LoadOrStore(user.Name, &refusalBucket{})
	}
	return v.(*refusalBucket)
}

// spend takes one refusal from u.
func (b *refusalBudgets) spend(u *refusalBucket) {
	if b.perSec <= 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	if u.at.IsZero() {
		u.tokens, u.at = b.perSec, now
	}
	u.tokens = min(b.perSec, u.tokens+now.Sub(u.at).Seconds()*b.perSec) - 1
	u.tokens = max(u.tokens, -b.perSec)
	u.at = now
	if u.tokens < 0 {
		u.until.Store(int64(now.Sub(refusalEpoch) + time.Duration(-u.tokens/b.perSec*float64(time.Second))))
	}
}

// pause is how long a connection drawing on u waits before its next read:
// zero unless the budget is spent.
func (u *refusalBucket) pause() time.Duration {
	until := u.until.Load()
	if until == 0 {
		return 0
	}
	return min(time.Duration(until)-time.Since(refusalEpoch), maxRefusalPause)
}

// refused draws one limit refusal of c from its budget.
func (c *request) refused() {
	if c.s != nil {
		c.s.metrics.refusals.Add(1)
		c.s.refusals.spend(c.s.refusals.bucket(c.user, c.peer))
	}
}

// backOff waits out the refusal debt of c's budget before c reads again;
// false if the server began shutting down meanwhile.
func (c *client) backOff() bool {
	d := c.s.refusals.bucket(c.user, c).pause()
	if d <= 0 {
		return true
	}
	c.s.metrics.backoffs.Add(1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.s.stopping:
		return false
	}
}
