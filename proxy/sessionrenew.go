package proxy

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// The session locks' renewer (sessions.go has the book it renews).

// renewer renews the book's due locks every tick until ctx ends.
func (ss *sessions) renewer(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(ss.s.opts.SessionTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ss.renewDue(ctx)
		}
	}
}

// renewDue renews, in one batched round, every lock a third of whose TTL has
// passed; it drops locks whose window ended unrenewed or that are gone.
func (ss *sessions) renewDue(ctx context.Context) {
	// Held from before the book is read: a release that drops a lock after
	// it was taken for this round waits for the round (see drop).
	ss.renewing.Lock()
	now := time.Now()
	var due []*sessionLock
	var leases []quorum.Lease
	ss.mu.Lock()
	for _, mine := range ss.book {
		for _, l := range mine {
			switch left := l.until.Sub(now); {
			case left <= ss.s.engine.MinValidity():
				ss.dropLocked(l)
				ss.lose(l, errWindowEnded)
			case left <= l.ttl*2/3:
				due = append(due, l)
			}
		}
	}
	ss.mu.Unlock()
	due = fairOrder(due)
	for _, l := range due {
		leases = append(leases, quorum.Lease{Key: l.id.key, Value: l.id.owner, TTL: l.ttl, Round: l.round, Granted: l.token})
	}
	if len(due) == 0 {
		ss.renewing.Unlock()
		return
	}
	if h := renewHook.Load(); h != nil {
		(*h)("snapshot")
	}
	ss.renewals.Add(1)
	errs := ss.s.engine.Renew(quorum.WithArrival(ctx, now), leases)
	ss.renewing.Unlock()
	if h := renewHook.Load(); h != nil {
		(*h)("renewed")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for i, l := range due {
		if ss.book[l.c][l.id] != l {
			continue // released or replaced meanwhile
		}
		switch err := errs[i]; {
		case err == nil:
			l.until = now.Add(l.ttl)
			ss.renewed.Add(1)
		case errors.Is(err, quorum.ErrNotHeld) && ss.moving[l.id] > 0:
			// A re-attach through this replica is moving the lock: it
			// unbooks this booking once it succeeded; else the next
			// tick tells.
		case errors.Is(err, quorum.ErrNotHeld):
			ss.dropLocked(l)
			ss.lose(l, err)
		}
		// Otherwise (no quorum now) the next tick tries again while the window lasts.
	}
}

// renewHook, nil but in tests, is called in renewDue once the due locks
// are taken from the book ("snapshot") and once their round ended
// ("renewed").
var renewHook atomic.Pointer[func(stage string)]

var errWindowEnded = errors.New("its window ended before a renewal succeeded")

// lose counts and logs a session lock that is no longer held.
func (ss *sessions) lose(l *sessionLock, why error) {
	ss.lost.Add(1)
	if ok, quiet := ss.lossLog.due(time.Now()); ok {
		attrs := ss.s.sessionAttrs(l, why)
		if quiet > 0 {
			attrs = append(attrs, "lost_unlogged_since_last", quiet)
		}
		ss.s.opts.logger.Warn("session lock lost; no longer renewed (at most one line per 10s; every loss counts in INFO)", attrs...)
	}
}

func (s *lockService) sessionAttrs(l *sessionLock, err error) []any {
	attrs := []any{"client", l.c.ident(), "err", err}
	if s.opts.logValues {
		attrs = append(attrs, slog.String("key", l.id.key), slog.String("owner", l.id.owner))
	}
	return attrs
}

// shutdown stops the renewer; locks still booked expire with their TTL.
func (ss *sessions) shutdown() {
	ss.mu.Lock()
	stop, done := ss.stop, ss.done
	ss.stopped = true
	ss.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
