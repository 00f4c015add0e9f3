package quorum

import (
	"strings"
	"time"
)

// extend is the extend script on one lock: l.Key's TTL set to l.TTL while
// it holds l.Value and its holder's window is open, never shorter when
// renewal (a session's renewal or re-attach) or when a session renews the
// lock (its round's mark); with pin, the promise pinned (PinKey) for l.TTL.
func (f *fakeNode) extend(l Lease, pin, renewal bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.data[l.Key]
	if !ok || e.value != l.Value || time.Until(e.expiry) <= e.pad || l.Round != "" && e.round != l.Round {
		return false // not held, or the holder's window is over, or not this round's
	}
	ttl, pad := l.TTL, l.Pad
	keep := renewal || strings.HasSuffix(e.round, BoundMark) || strings.HasSuffix(e.round, SessionMark)
	if left := time.Until(e.expiry); keep && left > ttl {
		ttl, pad = left, max(pad, e.pad)
	}
	f.setTTLs = append(f.setTTLs, ttl)
	// A renewal confirms the token its lock's grant answered where its
	// round notes one tentative (pexpireifeq.lua).
	token, tentative := e.token, e.tentative
	if tentative && renewal && l.Round != "" && l.Granted != 0 {
		token, tentative = l.Granted, false
	}
	f.data[l.Key] = fakeEntry{value: l.Value, expiry: time.Now().Add(ttl), round: e.round, pad: pad, token: token, note: e.note, tentative: tentative}
	if p, ok := f.data[PinKey(l.Key)]; pin && (!keep || !ok || p.value != l.Value || time.Until(p.expiry) < l.TTL) {
		f.data[PinKey(l.Key)] = fakeEntry{value: l.Value, expiry: time.Now().Add(l.TTL)}
	}
	return true
}

// unmark drops the session's mark from key's round: a pinned lock left
// at a close or a rollback is a timed lock from then on (f.mu held).
func (f *fakeNode) unmark(key string) {
	if e := f.data[key]; strings.HasSuffix(e.round, BoundMark) || strings.HasSuffix(e.round, SessionMark) {
		e.round = e.round[:len(e.round)-1]
		f.data[key] = e
	}
}

// pinned tells whether an extend from outside key's session pinned its
// promise to value (f.mu held).
func (f *fakeNode) pinned(key, value string) bool {
	p, ok := f.data[PinKey(key)]
	return ok && p.value == value && time.Now().Before(p.expiry)
}

// reattach is OpReattach: extend, then note round as the lock's writer.
func (f *fakeNode) reattach(op Op) bool {
	f.mu.Lock()
	e := f.data[op.Key]
	bound := strings.HasSuffix(e.round, BoundMark)
	f.mu.Unlock()
	if bound || (Entry{Note: e.note, Token: e.token}).noteToken() != op.IfEq || roundOrder(op.Round).before(roundOrder(e.round)) {
		return false // connection-bound, another token than the settled one, or a later re-attach's
	}
	if !f.extend(Lease{Key: op.Key, Value: op.Value, TTL: op.TTL, Pad: op.Pad}, false, true) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e = f.data[op.Key]
	e.round = op.Round
	f.data[op.Key] = e
	return true
}
