package quorum

// The fake node's reentrant hash locks (Redisson's layout).

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// incrLocked increments counter key for round, as the acquire scripts do:
// a lock's own counter (LockCounterKey) it lacks starts from TokenKey's.
func (f *fakeNode) incrLocked(key, round string) int64 {
	c, ok := f.data[key]
	if !ok && strings.HasPrefix(key, LockCounterKey("")) {
		c = f.data[TokenKey]
	}
	n, _ := strconv.ParseInt(c.value, 10, 64)
	f.data[key] = fakeEntry{value: strconv.FormatInt(n+1, 10), expiry: time.Now().Add(time.Hour)}
	f.data[WriterKey(key)] = fakeEntry{value: round, expiry: time.Now().Add(time.Hour)}
	f.counters[key] = true
	return n + 1
}

// applyHash runs the hash lock and counter operations.
func (f *fakeNode) applyHash(op Op, owner string, held bool) Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.data[op.Key]
	switch op.Kind {
	case OpHashAcquire:
		if held && owner != op.Value {
			return Reply{N: time.Until(e.expiry).Milliseconds()}
		}
		if !held {
			e.holds = 0
		}
		e = fakeEntry{value: op.Value, expiry: time.Now().Add(op.TTL), holds: e.holds + 1}
		f.data[op.Key] = e
		var token int64
		if op.Aux != "" {
			token = f.incrLocked(op.Aux, op.Round)
		}
		return Reply{OK: true, N: int64(e.holds), Token: token}
	case OpHashRelease:
		switch {
		case !held:
			return Reply{N: -2}
		case owner != op.Value:
			return Reply{N: -1}
		case e.holds > 1:
			e.holds--
			e.expiry = time.Now().Add(op.TTL)
			f.data[op.Key] = e
			return Reply{N: 0, Pre: int64(e.holds + 1)}
		}
		delete(f.data, op.Key)
		return Reply{OK: true, N: 1, Pre: 1}
	case OpHashSetHolds:
		if held && owner != op.Value {
			return Reply{}
		}
		f.data[op.Key] = fakeEntry{value: op.Value, expiry: time.Now().Add(op.TTL), holds: int(op.N)}
		return Reply{OK: true, N: 1}
	case OpHashUnhold:
		if !held || owner != op.Value {
			return Reply{}
		}
		if e.holds--; op.N == 0 || e.holds <= 0 {
			delete(f.data, op.Key)
			return Reply{OK: true, N: 1}
		}
		f.data[op.Key] = e
		return Reply{}
	case OpRaise, OpFixToken:
		prior, _ := strconv.ParseInt(f.data[op.Key].value, 10, 64)
		own := f.data[WriterKey(op.Key)].value == op.Round
		if prior < op.N {
			f.data[WriterKey(op.Key)] = fakeEntry{value: op.Round, expiry: time.Now().Add(time.Hour)}
		}
		f.raiseLocked(op.Key, op.N)
		noted := false
		l, ok := f.data[op.Aux]
		ok = ok && op.Aux != "" && time.Now().Before(l.expiry) && l.value == op.Value && l.round == op.Round
		if op.Kind == OpFixToken { // set if absent, never on a fenced lock
			if ok && l.note == NoteNone && op.N > 0 {
				l.token, l.note = op.N, NoteFixed
				f.data[op.Aux] = l
			}
			if !ok || l.note != NoteFixed {
				return Reply{OK: true, N: prior, Own: own}
			}
			return Reply{OK: true, N: prior, Own: own, Noted: true, Token: l.token}
		}
		if op.Tentative {
			f.calls["first raise"]++
		}
		switch {
		case !ok:
		case op.Tentative: // a first raise: tentative where no token or a tentative one is noted
			if l.token == 0 || l.tentative {
				l.token, l.tentative = op.N, true
			}
			noted = true
		case l.tentative || l.token == 0 || l.token == op.N: // a last raise: its token final
			l.token, l.tentative, noted = op.N, false, true
		}
		if noted {
			f.data[op.Aux] = l
		}
		return Reply{OK: true, N: prior, Own: own, Noted: noted}
	}
	return Reply{Err: errors.New("fake: unknown op")}
}

// holds is the hold count of owner on key, 0 when it does not hold it.
func (f *fakeNode) holds(key, owner string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[key]
	if !ok || time.Now().After(e.expiry) || e.value != owner {
		return 0
	}
	return e.holds
}
