package proxy

import (
	"context"
	"sync"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A session lock whose renewal finds it no longer held by its booking's
// round is either gone (expired, released, force-released: lost) or held
// by its owner under another round: its holder re-attached it through
// another connection, maybe through another replica. A re-attach whose
// client was not answered moves the lock back to the round it moved it
// from (proxy/reattach.go), so the booking that named that round must
// still be there to renew it: a booking whose lock is held by its owner
// stays in the book, renewing nothing (its renewals name its own round),
// until its window ends or a renewal succeeds again. Nothing a client can
// write makes this unsafe: a renewal extends the lock only where its note
// names the booking's round, and its release at close deletes it only
// there.

// maxAwayReads bounds the reads one renewal tick runs at once to tell a
// lost lock from a moved one.
const maxAwayReads = 16

// lostOrAway reads each lock in gone (not held by its booking's round on a
// quorum) and drops the booking as lost unless the lock is held by its
// owner under another round: then it stays, away.
func (ss *sessions) lostOrAway(ctx context.Context, gone []*sessionLock) {
	if len(gone) == 0 {
		return
	}
	const (
		lost = iota
		away
		unknown // no quorum answered: the next tick tells, while the window lasts
	)
	found := make([]int, len(gone))
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxAwayReads)
	for i, l := range gone {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			switch v, err := ss.s.engine.Get(ctx, l.id.key); {
			case err != nil:
				found[i] = unknown
			case v.Found && v.Type == quorum.TypeString && v.Value == l.id.owner:
				found[i] = away
			}
		}()
	}
	wg.Wait()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for i, l := range gone {
		switch {
		case ss.book[l.c][l.id] != l:
			// released or replaced meanwhile
		case found[i] == away:
			l.away = true
		case found[i] == lost:
			ss.dropLocked(l)
			ss.lose(l, quorum.ErrNotHeld)
		}
	}
}
