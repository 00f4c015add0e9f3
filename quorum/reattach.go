package quorum

import (
	"context"
	"errors"
	"strconv"
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
func (e *Engine) Reattach(ctx context.Context, key, value string, ttl time.Duration) (Grant, error) {
	if err := reservedKey(key); err != nil {
		return Grant{}, err
	}
	// A token fixed or made final between the read and the move (another
	// re-attach's TokenOf, a grant's last raise) moves nothing: the lock is
	// read again, up to three times, while its owner still holds it.
	for try := 1; ; try++ {
		v, _, err := e.readNoted(ctx, key)
		switch {
		case err != nil:
			return Grant{}, err
		case !v.Found || v.Value != value || v.Type != TypeString:
			return Grant{}, ErrNotHeld
		case v.Agreed < e.quorum || v.Note != NoteNone && v.Token == 0:
			return Grant{}, ErrTokenUnsettled
		}
		g, err := e.extend(ctx, Op{Kind: OpReattach, Key: key, Value: value, Round: e.newRoundID() + SessionMark, IfEq: v.noteToken()}, ttl)
		if try < 3 && errors.Is(err, ErrNotHeld) {
			continue
		}
		if err == nil && v.Note == NoteFenced {
			g.Token = v.Token // the fenced token it moved: its renewals confirm and restore it (Lease.Granted)
		}
		return g, err
	}
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
