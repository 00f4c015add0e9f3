package main

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

// checkHistory is the whole-history checker the nemesis runs; swapping in
// history.Check is this one line.
var checkHistory = localCheck

// verdict is what a checker says of a history: every anomaly it is certain of.
type verdict struct {
	Anomalies []string
	Late      int // OK answers that arrived after the window they granted (not an anomaly by itself)
}

// window is a span in which an owner was entitled to believe it held a key:
// from an OK answer to the end of the TTL counted from the request's send
// (DESIGN.md: the client's window), cut at the owner's first release sent.
type window struct {
	owner    string
	from, to time.Duration
}

// localCheck flags only what cannot happen if the proxy keeps its promise:
//   - two owners' windows on one key overlap;
//   - an owner is told it holds a key (LOCK.TOKEN, an extend: at some
//     instant between send and answer) entirely inside another's window;
//   - one lock is answered two different tokens;
//   - a lock acquired after another's token was answered gets a token no
//     larger than it (tokens only go up).
//
// Unknown outcomes constrain nothing: each may or may not have taken effect.
func localCheck(ops []history.Op) verdict {
	var v verdict
	byKey := map[string][]history.Op{}
	for _, op := range ops {
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		checkKey(key, byKey[key], &v)
	}
	return v
}

func checkKey(key string, ops []history.Op, v *verdict) {
	byOwner := map[string][]history.Op{}
	var owners []string
	for _, op := range ops {
		if byOwner[op.Owner] == nil {
			owners = append(owners, op.Owner)
		}
		byOwner[op.Owner] = append(byOwner[op.Owner], op)
	}
	var wins, points []window
	for _, owner := range owners {
		w, p := ownerWindows(byOwner[owner], v)
		wins, points = append(wins, w...), append(points, p...)
	}
	wins = mergeOwners(wins)
	var last window
	for i, w := range wins {
		if i > 0 && w.from < last.to && w.owner != last.owner {
			v.Anomalies = append(v.Anomalies, fmt.Sprintf("%s: two owners: %s holds from %.3fs, inside %s's window until %.3fs (%v overlap)",
				key, w.owner, w.from.Seconds(), last.owner, last.to.Seconds(), (min(last.to, w.to)-w.from).Round(time.Microsecond)))
		}
		if i == 0 || w.to > last.to {
			last = w
		}
	}
	for _, p := range points {
		i := sort.Search(len(wins), func(i int) bool { return wins[i].from > p.from })
		for j := i - 1; j >= 0 && wins[j].from >= p.from-time.Minute; j-- {
			if w := wins[j]; w.owner != p.owner && w.to >= p.to {
				v.Anomalies = append(v.Anomalies, fmt.Sprintf("%s: %s was told it holds the lock between %.3fs and %.3fs, all inside %s's window (%.3fs..%.3fs)",
					key, p.owner, p.from.Seconds(), p.to.Seconds(), w.owner, w.from.Seconds(), w.to.Seconds()))
				break
			}
		}
	}
	checkTokens(key, ops, v)
}

// ownerWindows follows one owner's ops in the order it sent them. An OK
// acquire opens a window [answer, send + TTL]. An extend sets the TTL anew
// (PEXPIRE, LOCK.EXTEND, Redisson's renewal may shorten it too): an OK one
// makes the end send + TTL; one with any other outcome may or may not have
// landed, so the end becomes the earlier of the two (its send, if the owner
// was told it does not hold the lock). A release ends the window when sent.
// Extends and LOCK.TOKEN answered OK also say the owner held the lock at
// some instant between send and answer: the points.
func ownerWindows(ops []history.Op, v *verdict) (wins, points []window) {
	slices.SortFunc(ops, func(a, b history.Op) int { return int(a.Invoke - b.Invoke) })
	var cur *window
	closeCur := func() {
		if cur != nil && cur.from < cur.to {
			wins = append(wins, *cur)
		}
		cur = nil
	}
	for _, op := range ops {
		switch op.Kind {
		case history.Acquire:
			if op.Outcome != history.OK {
				continue
			}
			if op.Return > op.Invoke+op.TTL {
				v.Late++
			}
			closeCur()
			cur = &window{op.Owner, op.Return, op.Invoke + op.TTL}
		case history.Extend:
			switch {
			case op.Outcome == history.OK && cur != nil && op.Invoke <= cur.to:
				cur.to = op.Invoke + op.TTL
			case op.Outcome == history.OK:
				closeCur()
				cur = &window{op.Owner, op.Return, op.Invoke + op.TTL}
			case cur != nil && op.Outcome == history.NotHeld:
				cur.to = min(cur.to, op.Invoke)
			case cur != nil:
				cur.to = min(cur.to, op.Invoke+op.TTL)
			}
		case history.Release:
			if cur != nil {
				cur.to = min(cur.to, op.Invoke)
			}
			closeCur()
		}
		if op.Outcome == history.OK && (op.Kind == history.Extend || op.Kind == history.Token) {
			points = append(points, window{op.Owner, op.Invoke, op.Return})
		}
	}
	closeCur()
	return wins, points
}

// mergeOwners sorts windows by start and unites each owner's overlapping ones.
func mergeOwners(ws []window) []window {
	slices.SortFunc(ws, func(a, b window) int {
		if a.owner != b.owner {
			return compare(a.owner, b.owner)
		}
		return int(a.from - b.from)
	})
	var out []window
	for _, w := range ws {
		if n := len(out); n > 0 && out[n-1].owner == w.owner && w.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, w.to)
			continue
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b window) int { return int(a.from - b.from) })
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type tokenOf struct {
	owner   string
	token   int64
	fixed   time.Duration // first answer carrying the token
	acquire time.Duration // the granted acquire's send, -1 if none seen
}

func checkTokens(key string, ops []history.Op, v *verdict) {
	locks := map[string]*tokenOf{}
	get := func(owner string) *tokenOf {
		t := locks[owner]
		if t == nil {
			t = &tokenOf{owner: owner, fixed: -1, acquire: -1}
			locks[owner] = t
		}
		return t
	}
	for _, op := range ops {
		if op.Outcome != history.OK {
			continue
		}
		if op.Kind == history.Acquire {
			get(op.Owner).acquire = op.Invoke
		}
		if op.Token == 0 || (op.Kind != history.Acquire && op.Kind != history.Token) {
			continue
		}
		t := get(op.Owner)
		if t.token != 0 && t.token != op.Token {
			v.Anomalies = append(v.Anomalies, fmt.Sprintf("%s: one lock, two tokens: %s was answered %d and %d", key, op.Owner, t.token, op.Token))
		}
		if t.fixed < 0 || op.Return < t.fixed {
			t.token, t.fixed = op.Token, op.Return
		}
	}
	var fixed, acquired []*tokenOf
	for _, t := range locks {
		if t.token != 0 {
			fixed = append(fixed, t)
			if t.acquire >= 0 {
				acquired = append(acquired, t)
			}
		}
	}
	slices.SortFunc(fixed, func(a, b *tokenOf) int { return int(a.fixed - b.fixed) })
	slices.SortFunc(acquired, func(a, b *tokenOf) int { return int(a.acquire - b.acquire) })
	var top *tokenOf
	i := 0
	for _, b := range acquired {
		for ; i < len(fixed) && fixed[i].fixed < b.acquire; i++ {
			if top == nil || fixed[i].token > top.token {
				top = fixed[i]
			}
		}
		if top != nil && b.token <= top.token {
			v.Anomalies = append(v.Anomalies, fmt.Sprintf("%s: token went back: %s, acquired from %.3fs, got %d; %s's token %d was answered at %.3fs",
				key, b.owner, b.acquire.Seconds(), b.token, top.owner, top.token, top.fixed.Seconds()))
		}
	}
}
