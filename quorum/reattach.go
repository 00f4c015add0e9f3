package quorum

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reattach is Extend for the holder of a session lock that reconnected
// (to this replica or another) and takes it over: it also notes a new round
// as the lock's writer where it extends it (keeping its token), and the
// Grant carries that round for the new connection's renewals and release
// (Lease.Round, ReleaseRound). The renewals and the release at close of the
// connection that held it before name the old round: they no longer reach
// it, so a connection that closes late cannot delete the lock its holder
// now holds through another, nor shorten it.
//
// The lock moves only once its token is settled: a read first finds the
// token Q holders of its round note (it waits while a fenced acquire's
// first raise's token is tentative; ErrTokenUnsettled when none is: a
// fenced acquire's raise may still be on its way, or a first TokenOf), and
// the round moves only the holders that note exactly that one. A raise
// notes a token only beside its own acquire's round, so once a holder
// moved, none lands there; and the acquire's success needs Q holders to
// note its last token before they move. Either the acquire's last token
// is the one the re-attach moved (both answer it), or the acquire fails:
// never a lock whose holders keep two tokens, the larger on fewer than Q
// (whose counters a later grant may not exceed).
//
// Re-attaches of one lock through one engine run one at a time, each with
// its moved callback (nil: none): the caller books the grant there, before
// the next re-attach reads the lock. moved runs for a round that failed
// too (ErrNoQuorum, ErrValiditySpent, Grant.Round set): one that did not
// reach a quorum in time may have landed all the same, and the lock is
// then where it moved; its booking's renewals tell. Each round's landings
// on a node come after the last one's (one ordered queue per node), so the
// last booking is the round the nodes name; two re-attaches booking in the
// other order left a booking whose renewals reached no node, and the lock
// expired while its holder's connections were open.
func (e *Engine) Reattach(ctx context.Context, key, value string, ttl time.Duration, moved func(Grant)) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	unlock, err := e.reattaching.lock(ctx, key, value)
	if err != nil {
		return Grant{}, err
	}
	defer unlock()
	g, err := e.reattach(ctx, key, value, ttl)
	if moved != nil && (err == nil || g.Round != "") {
		moved(g) // failed or not: a round sent may have moved the lock
	}
	return g, err
}

func (e *Engine) reattach(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	// A token fixed or made final between the read and the move (another
	// re-attach's TokenOf, a grant's last raise), or a later re-attach
	// through another replica, moves nothing: the lock is read again, up to
	// three times, while its owner still holds it; then the owner is told
	// to ask again (ErrTokenUnsettled), never that the lock is not held.
	for try := 1; ; try++ {
		v, _, err := e.readNoted(ctx, key)
		switch {
		case err != nil:
			return Grant{}, err
		case !v.Found || v.Value != value || v.Type != TypeString || v.Bound():
			return Grant{}, ErrNotHeld // a connection-bound lock is not made a session's (reattach.lua)
		case roundOrder(v.Round)[0] > uint64(max(arrival(ctx).UnixMicro(), 0)):
			// Moved by a re-attach that arrived after this one (its read
			// was slow, or its replica paused): the later request wins.
			// (One of the same stamp is a pipeline's earlier command,
			// whose round this one, read after it, outranks by generation.)
			return Grant{}, ErrSuperseded
		case v.Agreed < e.quorum || v.Note != NoteNone && v.Token == 0 || try > 3:
			return Grant{}, ErrTokenUnsettled
		}
		if err := ctx.Err(); err != nil {
			return Grant{}, err // hung up while the lock was read: nothing sent
		}
		// The round waits for the (key, value) slot with ctx (a hang-up
		// meanwhile sends nothing, startTimed); once sent, it runs to its
		// verdict whatever becomes of its caller: a cancel unsends
		// nothing, and the lock moves to the caller's connection whether
		// or not it hears the answer (proxy/reattach.go).
		g, err := e.extend(ctx, Op{Kind: OpReattach, Key: key, Value: value, Round: e.reattachRound(v.Round, arrival(ctx)), IfEq: v.noteToken()}, ttl)
		if errors.Is(err, ErrNotHeld) {
			continue
		}
		if err != nil && !errors.Is(err, ErrNoQuorum) && !errors.Is(err, ErrValiditySpent) {
			g.Round = "" // refused before it was sent
		}
		g.From = v.Round
		if err == nil && v.Note == NoteFenced {
			g.Token = v.Token // the fenced token it moved: its renewals confirm and restore it (Lease.Granted)
		}
		return g, err
	}
}

// reattachRound is a new re-attach round of a session lock whose holders
// name round, for a request that arrived at: "<generation>.<arrival
// µs>.<random>^<id>@", one generation past round's (an acquire's round is
// order 0), ordered by arrival first, then generation, then the random
// part. reattach.lua moves a backend to no round of an order below the one
// it names: when re-attaches race, each backend keeps the latest that
// reached it, so the latest of them that succeeds holds every backend it
// reached, and one whose round a later one overtook on a backend lacks
// that backend's vote and reads again. The request that arrived later
// wins: a client that gave up on a re-attach (hung up while its read or
// its round was on its way, or its replica paused) and re-attached through
// another replica keeps the lock it was answered, the abandoned round
// moving no backend the answered one holds when it lands late; and one
// whose read finds a round that arrived after it sends nothing
// (ErrSuperseded): stamped with the arrival, not the send, a slow read or
// a pause cannot make the abandoned one the later (helper-71: ordered by
// generation first, an abandoned re-attach whose read came late read the
// answered one's round and outranked it). Two that arrived within the
// replicas' clock skew of each other are ordered by their clocks; stamped
// in µs, two of one stamp from two replicas are rare (in ms, helper-72
// found a late read in the same ms outranking the answered one).
func (e *Engine) reattachRound(round string, at time.Time) string {
	prev := roundOrder(round)
	o := order{uint64(max(at.UnixMicro(), 0)), prev[1] + 1, uint64(1 + rand.Uint32N(1<<20-1))}
	return strconv.FormatUint(o[1], 10) + "." + strconv.FormatUint(o[0], 10) + "." + strconv.FormatUint(o[2], 10) + "^" + e.newRoundID() + SessionMark
}

// RoundBefore reports round a ordered below b among one lock's rounds: an
// acquire's below every re-attach's, re-attaches by their order.
func RoundBefore(a, b string) bool { return roundOrder(a).before(roundOrder(b)) }

// order is a re-attach round's place among its lock's re-attaches: its
// request's arrival (Unix µs), generation, random part, compared in that
// order (written "<generation>.<arrival>.<random>").
type order [3]uint64

// before reports o ordered below p.
func (o order) before(p order) bool { return slices.Compare(o[:], p[:]) < 0 }

// Moved reports a re-attach's grant (Reattach): it moved a lock its owner
// held, and cannot be revoked.
func (g Grant) Moved() bool { return roundOrder(g.Round)[0] > 0 }

// roundOrder is a round's order among its lock's re-attaches (zero: not a
// re-attach's).
func roundOrder(round string) order {
	head, _, ok := strings.Cut(round, "^")
	if !ok {
		return order{}
	}
	parts := strings.Split(head, ".")
	if len(parts) != len(order{}) {
		return order{}
	}
	var o order
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return order{}
		}
		o[i] = n
	}
	o[0], o[1] = o[1], o[0] // written generation first, compared arrival first
	return o
}

// noteToken is the token part of a lock's note as the backends keep it:
// "" none, "<token>" a fenced acquire's, "=<token>" fixed by a TokenOf.
func (v Entry) noteToken() string {
	switch v.Note {
	case NoteFenced:
		return strconv.FormatInt(v.Token, 10)
	case NoteFixed:
		return "=" + strconv.FormatInt(v.Token, 10)
	}
	return ""
}
