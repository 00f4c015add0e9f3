package backend

// Reading the replies of the ops that answer more than a yes or no.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// ints reads a script's reply of n integers (n at most 3; an array, so
// that reading a reply allocates nothing).
func ints(script string, val any, n int) ([3]int64, error) {
	var out [3]int64
	res, ok := val.([]any)
	if !ok || len(res) != n || n > len(out) {
		return out, fmt.Errorf("unexpected reply to the %s script: %v", script, val)
	}
	for i, v := range res {
		if out[i], ok = v.(int64); !ok {
			return out, fmt.Errorf("unexpected reply to the %s script: %v", script, val)
		}
	}
	return out, nil
}

// hashAcquireReply reads the {granted, holds or pttl, token or ticket} reply of the hash acquire script.
func hashAcquireReply(val any) quorum.Reply {
	v, err := ints("hash acquire", val, 3)
	if err != nil {
		return quorum.Reply{Err: err}
	}
	if v[0] != 1 { // refused: a fair acquire's owner's ticket, where it is queued
		return quorum.Reply{N: v[1], Own: v[2] > 0, Token: v[2]}
	}
	return quorum.Reply{OK: true, N: v[1], Token: v[2]}
}

// hashReleaseReply reads the {result, holds before, flags} reply of the hash
// release script: flag 1 is Noted (the note kept marked, or from the
// latch, still the release's mark) with result 1, and Own (from the latch:
// the owner holds the lock here) with result 0; flag 2 is Others (a
// read-write lock's other holders keep it).
func hashReleaseReply(val any) quorum.Reply {
	v, err := ints("hash release", val, 3)
	if err != nil {
		return quorum.Reply{Err: err}
	}
	f, pre, holds := v[2]&1, v[1], int64(0)
	if pre < -1 { // answered from the latch: still held, with the owner's holds there
		pre, holds = -1, -1-v[1]
	}
	return quorum.Reply{OK: v[0] == 1, N: v[0], Pre: pre, Holds: holds, Noted: f == 1 && v[0] == 1, Own: f == 1 && v[0] == 0, Others: v[2]&2 != 0}
}

// raiseReply reads the {counter before, own, noted} reply of the raise
// script; for an OpFixToken, noted is the token fixed beside the lock.
func raiseReply(kind quorum.OpKind, val any) quorum.Reply {
	v, err := ints("raise", val, 3)
	if err != nil {
		return quorum.Reply{Err: err}
	}
	if kind == quorum.OpFixToken {
		return quorum.Reply{OK: true, N: v[0], Own: v[1] == 1, Noted: v[2] > 0, Token: v[2]}
	}
	return quorum.Reply{OK: true, N: v[0], Own: v[1] == 1, Noted: v[2] == 1}
}

// entryOf reads the {value, pttl[, type[, token, round, note kind, tentative]]} reply of a read script.
func entryOf(val any) (quorum.Entry, error) {
	res, ok := val.([]any)
	if !ok || len(res) < 2 || len(res) > 7 {
		return quorum.Entry{}, fmt.Errorf("unexpected reply to the read script: %v", val)
	}
	ttl, ok := res[1].(int64)
	if !ok {
		return quorum.Entry{}, fmt.Errorf("unexpected PTTL in the read script's reply: %v", res[1])
	}
	value, found := res[0].(string)
	e := quorum.Entry{Found: found, Value: value, TTL: time.Duration(ttl) * time.Millisecond}
	if len(res) >= 4 {
		e.Token, _ = res[3].(int64)
	}
	if len(res) >= 5 {
		e.Round, _ = res[4].(string)
	}
	if len(res) >= 6 {
		kind, _ := res[5].(int64)
		e.Note = quorum.NoteKind(kind)
	}
	if len(res) == 7 {
		tentative, _ := res[6].(int64)
		e.Tentative = tentative == 1
	}
	if len(res) >= 3 {
		typ, _ := res[2].(int64)
		e.Type = quorum.KeyType(typ)
		e.Found = e.Found || e.Type == quorum.TypeHash && ttl != -2
	}
	return e, nil
}

// extendReply reads a batched renewal's reply: one 0 or 1 per lock of
// op.Leases (OpRenew, OpQueueBeats).
func extendReply(op quorum.Op, val any) quorum.Reply {
	res, ok := val.([]any)
	if !ok || len(res) != len(*op.Leases) {
		return quorum.Reply{Err: fmt.Errorf("unexpected reply to the extend script: %v", val)}
	}
	each := make([]bool, len(res))
	var notes []string
	for i, v := range res {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "+") { // a renewal: extended, with its note's token part
			if notes == nil {
				notes = make([]string, len(res))
			}
			each[i], notes[i] = true, strings.TrimPrefix(s[1:], " ")
			continue
		}
		each[i] = v == int64(1)
	}
	if notes != nil {
		return quorum.Reply{OK: true, Each: &each, Notes: &notes}
	}
	return quorum.Reply{OK: true, Each: &each}
}

// semaphoreReply reads the semaphore script's reply: {done, n, permits,
// generation}, or for "state" {set, permits, generation, id, slot, ms
// left, ...} (Pre: set; Notes: the ids, their slots and their ms left, in
// turn); Entry.Round: the generation.
func semaphoreReply(op quorum.Op, val any) quorum.Reply {
	res, ok := val.([]any)
	if op.Mode != "state" {
		if !ok || len(res) != 4 {
			return quorum.Reply{Err: fmt.Errorf("unexpected reply to the semaphore script: %v", val)}
		}
		v, err := ints("semaphore", res[:3], 3)
		g, ok := res[3].(string)
		if err != nil || !ok {
			return quorum.Reply{Err: fmt.Errorf("unexpected reply to the semaphore script: %v", val)}
		}
		return quorum.Reply{OK: v[0] == 1, N: v[1], Pre: v[2], Entry: quorum.Entry{Round: g}}
	}
	if !ok || len(res) < 3 || (len(res)-3)%3 != 0 {
		return quorum.Reply{Err: fmt.Errorf("unexpected reply to the semaphore script: %v", val)}
	}
	set, _ := res[0].(int64)
	p, _ := res[1].(int64)
	g, _ := res[2].(string)
	held := make([]string, 0, len(res)-3)
	for i := 3; i < len(res); i += 3 {
		id, _ := res[i].(string)
		slot, _ := res[i+1].(int64)
		ms, _ := res[i+2].(int64)
		held = append(held, id, strconv.FormatInt(slot, 10), strconv.FormatInt(ms, 10))
	}
	return quorum.Reply{OK: true, N: p, Pre: set, Notes: &held, Entry: quorum.Entry{Round: g}}
}

// printReply reads del.lua's print step: {exists, print, the semaphore's
// generation}.
func printReply(val any) quorum.Reply {
	res, ok := val.([]any)
	if !ok || len(res) != 3 {
		return quorum.Reply{Err: fmt.Errorf("unexpected reply to the print script: %v", val)}
	}
	exists, _ := res[0].(int64)
	print, ok := res[1].(string)
	if !ok {
		return quorum.Reply{Err: fmt.Errorf("unexpected print in the print script's reply: %v", res[1])}
	}
	g, _ := res[2].(string)
	return quorum.Reply{OK: true, Entry: quorum.Entry{Found: exists == 1, Value: print, Round: g}}
}
