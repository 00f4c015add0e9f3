package proxy

import "fmt"

// The bounds on session locks (max_session_locks_per_client and
// max_session_locks_per_user): a SESSION acquire reserves its place before
// its round, so a pipeline of them cannot overshoot; the place becomes the
// booked lock's once granted (addAs) and is freed when it leaves the book
// (dropLocked), however it leaves. Every lock in the book counts, whatever
// booked it.

// reserveSession takes a place for one more session lock of c (of user),
// or answers which limit is reached. unreserve gives the reservation back
// once the acquire ended, granted (the booked lock keeps its own place) or not.
func (ss *sessions) reserveSession(c peer, user string, id sessionKey) (unreserve func(), err error) {
	lim := ss.s.opts.Limits
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.pending == nil {
		ss.pending, ss.perUser = map[peer]int{}, map[string]int{}
	}
	// A lock this replica has booked already for this user (a re-attach,
	// or its retry on the connection it moved to) moves, it adds none: it
	// is not refused by the limits it counts in already (helper-72). One
	// booked for another user counts in that user's (helper-73: a user who
	// knew the owner value re-attached past its own limit).
	// (helper-74: so also one booked on this connection, which AUTH may
	// have moved to another user since.)
	here, anywhere := false, false
	if l := ss.book[c][id]; l != nil && l.user == user {
		here = true
	}
	for _, mine := range ss.book {
		if l := mine[id]; l != nil && l.user == user {
			anywhere = true
			break
		}
	}
	switch {
	case here:
	case lim.MaxSessionLocksPerClient > 0 && len(ss.book[c])+ss.pending[c] >= lim.MaxSessionLocksPerClient:
		return nil, limitRefusal(fmt.Sprintf("ERR too many session locks on this connection (max_session_locks_per_client %d)", lim.MaxSessionLocksPerClient))
	case lim.MaxSessionLocksPerUser > 0 && !anywhere && ss.perUser[user] >= lim.MaxSessionLocksPerUser:
		return nil, limitRefusal(fmt.Sprintf("ERR too many session locks for user %s (max_session_locks_per_user %d)", user, lim.MaxSessionLocksPerUser))
	}
	ss.pending[c]++
	ss.perUser[user]++
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if ss.pending[c]--; ss.pending[c] <= 0 {
			delete(ss.pending, c)
		}
		ss.countUser(user, -1)
	}, nil
}

// countUser moves user's count of session locks by d; the caller holds ss.mu.
func (ss *sessions) countUser(user string, d int) {
	if ss.perUser == nil {
		ss.perUser = map[string]int{}
	}
	if ss.perUser[user] += d; ss.perUser[user] <= 0 {
		delete(ss.perUser, user)
	}
}
