package quorum

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Get returns the value key holds on a quorum of nodes; Found is false when
// no value is held by Q nodes. It decides as soon as Q nodes agree, so its
// TTL is only a lower bound: use Read for the TTL. When too many nodes fail
// to answer to tell, it returns a *RoundError with Reason ErrNoQuorum.
func (e *Engine) Get(ctx context.Context, key string) (Entry, error) {
	if err := reservedKey(key); err != nil {
		return Entry{}, err
	}
	return e.read(ctx, Op{Kind: OpRead, Key: key}, true, false)
}

// Read is Get with a conservative remaining TTL: the Q-th largest TTL among
// the nodes that hold the majority value (when that one expires, fewer than
// Q hold it) minus the drift allowance. It waits for every node (each bounded
// by the node timeout), so that a lock just extended on a quorum reads as
// extended even while the extension still reaches the other nodes.
//
// A TTL whose conservative remainder is not positive reads as not found: the
// window a client could have been given is over. A key without expiry reads
// with a negative TTL. It reads the lock's note too: its Round (Entry.Bound)
// and token.
func (e *Engine) Read(ctx context.Context, key string) (Entry, error) {
	if err := reservedKey(key); err != nil {
		return Entry{}, err
	}
	return e.read(ctx, Op{Kind: OpRead, Key: key, Aux: MetaKey(key)}, false, false)
}

// readNoted is Read for a lock's token: a fenced lock whose holders note
// a tentative token (its acquire's first raise, which may yet be outbid)
// and none final on Q is read again until one is, for at most two node
// waits (its acquire's second raise and its confirmation). Waits grow from
// 1 ms: the acquire confirms its token at once. A lock whose confirmation
// was lost on too many holders reads without a token.
func (e *Engine) readNoted(ctx context.Context, key string) (Entry, time.Time, error) {
	giveUp := time.Now().Add(2 * e.opts.NodeTimeout)
	for wait := time.Millisecond; ; wait *= 2 {
		start := time.Now()
		v, err := e.read(ctx, Op{Kind: OpRead, Key: key, Aux: MetaKey(key)}, false, false)
		if err != nil || !v.Found || v.Token != 0 || !v.Tentative || start.After(giveUp) {
			return v, start, err
		}
		select {
		case <-ctx.Done():
			return Entry{}, start, ctx.Err()
		case <-time.After(min(wait, time.Until(giveUp)+time.Millisecond)):
		}
	}
}

// entryID tells apart the entries a read counts as different answers.
func entryID(v Entry, presence bool) string {
	if presence {
		return ""
	}
	return string(rune('0'+v.Type)) + v.Value
}

// read runs op (OpRead or OpHashGet) on every node and finds the entry a
// quorum agrees on; early decides as soon as one has Q; presence counts
// found entries as one whatever their values.
func (e *Engine) read(ctx context.Context, op Op, early, presence bool) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	deadline := time.Now().Add(e.opts.NodeTimeout)
	ch := e.send(nil, op, deadline)
	timer := time.NewTimer(e.opts.NodeTimeout)
	defer timer.Stop()
	var (
		answers = make([]answer, 0, len(e.nodes))
		counts  = make(map[string]int, 2)
		absent  int
		errs    = make([]error, len(e.nodes))
	)
wait:
	for range e.nodes {
		var a answer
		select {
		case a = <-ch:
		case <-timer.C:
			break wait
		}
		if a.reply.Err != nil {
			errs[a.node] = a.reply.Err
			continue
		}
		v := a.reply.Entry
		if !v.Found && e.mayHaveLostKeys(a.node, time.Now()) {
			// A node in restart quarantine lost its keys: its "absent" says
			// nothing of a lock written before, so it is no answer.
			errs[a.node] = e.quarantineErr(a.node)
			continue
		}
		answers = append(answers, a)
		if !v.Found {
			absent++
		} else {
			id := entryID(v, presence)
			if counts[id]++; early && counts[id] >= e.quorum {
				return e.majorityEntry(id, presence, answers), nil
			}
		}
		if absent > len(e.nodes)-e.quorum {
			return Entry{}, nil // no value can reach Q any more
		}
	}
	best := 0
	for id, c := range counts {
		if c >= e.quorum {
			return e.majorityEntry(id, presence, answers), nil
		}
		best = max(best, c)
	}
	// No value reached Q. That is a definite "absent" only if no value could
	// have, had the failed nodes answered.
	if failed := len(e.nodes) - len(answers); best+failed >= e.quorum {
		return Entry{}, e.readError(answers, errs)
	}
	return Entry{}, nil
}

// quarantineErr says why node i may not count now.
func (e *Engine) quarantineErr(i int) error {
	why, young := e.quarantine(i, time.Now())
	if why == "" {
		why = "quarantined: it may have lost locks"
	}
	return &QuarantineError{Why: why, Young: young}
}

func (e *Engine) readError(answers []answer, errs []error) *RoundError {
	answered := make([]bool, len(e.nodes))
	for _, a := range answers {
		answered[a.node] = true
	}
	merr := &multierror.Error{ErrorFormat: oneLine}
	for i, n := range e.nodes {
		if answered[i] {
			continue
		}
		err := errs[i]
		if err == nil {
			err = context.DeadlineExceeded
		}
		merr.Errors = append(merr.Errors, &NodeError{Addr: n.Addr(), Err: err})
	}
	return &RoundError{Op: RoundRead, Reason: ErrNoQuorum, Votes: len(answers), Nodes: len(e.nodes), Quorum: e.quorum, NodeErrs: merr}
}

// majorityEntry builds the answer for the entry id names from the nodes
// that hold it.
func (e *Engine) majorityEntry(id string, presence bool, answers []answer) Entry {
	ttls := make([]time.Duration, 0, len(answers))
	var (
		found   Entry
		fenced  map[int64]int // holders per token a fenced acquire's last raise made final
		tent    map[int64]int // holders per token its first raise noted tentative
		fixed   map[int64]int // holders per token fixed by a first TokenOf
		kind    = NoteNone
		pending bool // a fenced note without its token yet (an acquire's before its raise, or a restore's)
	)
	// The same value may be held by two locks at once: a released lock's
	// copy left on a node its release did not reach, and a new owner's
	// lock written with the same value (a constant value) on others. Only
	// the notes of the lock's own round count: the round most holders carry
	// (a restore's empty round aside); when another round is there too and
	// that one lacks Q holders, the token is not known (read without one).
	lockRound, mixed := roundOf(id, presence, answers, e.quorum)
	for _, a := range answers {
		if v := a.reply.Entry; v.Found && entryID(v, presence) == id {
			ttls = append(ttls, v.TTL)
			found = v
			if lockRound != nil && v.Round != *lockRound {
				continue
			}
			switch {
			case v.Note == NoteFenced && v.Tentative:
				if tent == nil {
					tent = map[int64]int{}
				}
				tent[v.Token]++
			case v.Note == NoteFenced && v.Token == 0:
				pending = true
			case v.Note == NoteFenced:
				if fenced == nil {
					fenced = map[int64]int{}
				}
				fenced[v.Token]++
				kind = NoteFenced
			case v.Note == NoteFixed:
				if fixed == nil {
					fixed = map[int64]int{}
				}
				fixed[v.Token]++
			}
		}
	}
	// A token is the lock's only once Q holders note it final: only the
	// grant's last raise makes a token final (an outbid first raise's stays
	// tentative), and a tentative token counts only beside the same token
	// final on another holder (the first raise's token was then the last
	// raise's too: confirmed). Read on fewer, a token could be one the lock
	// does not keep (the last raise of a grant that failed, on fewer than
	// Q): then none is answered.
	found.Token, found.Note, found.Tentative = 0, kind, false
	for token, n := range fenced {
		if n+tent[token] >= e.quorum {
			found.Token = token
		}
	}
	if found.Token == 0 && len(tent) > 0 {
		pending, found.Tentative = true, true
	}
	for token, n := range fixed {
		if kind == NoteNone && n >= e.quorum {
			found.Token, found.Note = token, NoteFixed
		}
	}
	if kind == NoteNone && found.Token == 0 && len(fixed) > 0 {
		found.Note = NoteFixed // being fixed: TokenOf decides
	}
	// A fenced note without a token says only that a fenced acquire's
	// raise has not noted one there (yet, or since a renewal restored the
	// lock on a node that lost it, its holders not agreeing on a token):
	// it yields to a token other holders note, fixed or fenced, and keeps
	// a lock whose holders note none from being fixed (its token may be
	// one a grant answered: a restored copy cannot tell).
	if pending && found.Note == NoteNone {
		found.Note = NoteFenced
	}
	if lockRound != nil {
		found.Round = *lockRound
	}
	if mixed {
		found.Token, found.Note = 0, NoteFenced // no round has Q holders: no token to answer, none to fix
	}
	for _, a := range answers {
		if v := a.reply.Entry; v.Found && entryID(v, presence) == id && (lockRound == nil || v.Round == *lockRound) &&
			v.Note == found.Note && v.Token == found.Token && !mixed {
			found.Agreed++
		}
	}
	slices.Sort(ttls)
	slices.Reverse(ttls)
	found.TTL = ttls[e.quorum-1]
	if found.TTL < 0 {
		return found
	}
	if found.TTL -= e.Drift(found.TTL); found.TTL <= 0 {
		return Entry{}
	}
	return found
}

// roundOf is the round of the lock id names: the one most of its holders
// among answers carry (empty rounds, a restore's or a hash lock's, not
// counted), nil when none carries one. Mixed is true when two rounds tie
// for the most, or when another round is there and the most carried has
// fewer than Q holders: the holders are not one lock's. (Restores alone
// never mix: a session lock restored on several nodes keeps its token.)
func roundOf(id string, presence bool, answers []answer, quorum int) (round *string, mixed bool) {
	counts := make(map[string]int, 2)
	for _, a := range answers {
		if v := a.reply.Entry; v.Found && entryID(v, presence) == id && v.Round != "" {
			counts[v.Round]++
		}
	}
	if len(counts) == 0 {
		return nil, false
	}
	best, tie := "", false
	for r, c := range counts {
		switch {
		case c > counts[best] || best == "":
			best, tie = r, false
		case c == counts[best]:
			tie = true
		}
	}
	return &best, tie || len(counts) > 1 && counts[best] < quorum
}
