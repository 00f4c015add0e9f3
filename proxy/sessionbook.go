package proxy

import (
	"time"
)

// The session book's lookups, and the count of re-attaches under way
// (proxy/reattach.go): the renewer and the bookings are in sessions.go.

// move counts a re-attach of id under way through this replica; the
// returned func ends it. While one is, a renewal that finds the lock not
// held by its booking's round keeps the booking for the next tick: the
// re-attach unbooks it once it succeeded, rather than the renewer counting
// a moved lock as lost.
func (ss *sessions) move(id sessionKey) func() {
	ss.mu.Lock()
	if ss.moving == nil {
		ss.moving = map[sessionKey]int{}
	}
	ss.moving[id]++
	ss.mu.Unlock()
	return func() {
		ss.mu.Lock()
		if ss.moving[id]--; ss.moving[id] == 0 {
			delete(ss.moving, id)
		}
		ss.mu.Unlock()
	}
}

// roundOf is the round p booked its session lock id with, if it did.
func (ss *sessions) roundOf(p peer, id sessionKey) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if l := ss.book[p][id]; l != nil {
		return l.round, true
	}
	return "", false
}

// booksRound reports p's booking of id names round.
func (ss *sessions) booksRound(p peer, id sessionKey, round string) bool {
	r, ok := ss.roundOf(p, id)
	return ok && r == round
}

// dropRound is drop of p's booking of id if it names round (any, when
// round is ""): one that a later re-attach through p booked since stays.
func (ss *sessions) dropRound(p peer, id sessionKey, round string) bool {
	ss.mu.Lock()
	l := ss.book[p][id]
	dropped := l != nil && (round == "" || l.round == round) && ss.dropLocked(l)
	ss.mu.Unlock()
	if dropped {
		ss.awaitRenewal()
	}
	return dropped
}

// windowEnd is when p's session lock id's window ends, as last granted or
// renewed, if p has it booked.
func (ss *sessions) windowEnd(p peer, id sessionKey) (time.Time, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if l := ss.book[p][id]; l != nil {
		return l.until, true
	}
	return time.Time{}, false
}

// holds reports whether p has session locks booked.
func (ss *sessions) holds(p peer) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.book[p]) > 0
}

// count is how many session locks the server renews now.
func (ss *sessions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for _, mine := range ss.book {
		n += len(mine)
	}
	return n
}
