package proxy

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/redcon"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// request is one command being answered: a copy of the connection's session
// plus the writer its reply goes to, which is the connection's own, or a
// buffer of its own when it runs beside other commands of a pipeline. Its
// ctx carries the moment the command arrived (quorum.WithArrival).
type request struct {
	session // as the command found it; changing it changes nothing
	s       *Server
	peer    peer    // the connection as a command beside others may use it
	conn    *client // the connection itself, for a command that runs alone (not lock or read); else nil
	ctx     context.Context
	arrived time.Time
	wr      *redcon.Writer
	mark    int // where its reply starts in wr

	grantsMu sync.Mutex
	grants   []quorum.Grant // what its reply says was granted
	sessions []sessionKey   // session locks its grants booked
}

func (c *client) newRequest(wr *redcon.Writer, arrived time.Time) *request {
	return &request{session: c.session, s: c.s, peer: c, ctx: quorum.WithArrival(c.ctx, arrived), arrived: arrived, wr: wr, mark: len(wr.Buffer())}
}

// The reply writers handlers share. Replies whose encoding differs between
// RESP2 and RESP3 are written here; everything else (simple strings,
// errors, integers, bulk strings, arrays) is the same in both.

// writeErr writes err as one RESP error line (replyText).
func (c *request) writeErr(err error) {
	switch e := err.(type) {
	case respError: // the common case, without errors.As's reflection
	case limitRefusal:
		c.refused()
		err = respError(e)
	default:
		var beyond ttlBeyond
		if errors.As(err, &beyond) && c.s != nil {
			err = beyond.overMax(c.s.engine.MaxTTL())
		}
	}
	c.wr.WriteError(replyText(err))
}

// writeNull: RESP3's null, or RESP2's null bulk string.
func (c *request) writeNull() {
	if c.proto == 3 {
		c.wr.WriteRaw([]byte("_\r\n"))
		return
	}
	c.wr.WriteNull()
}

// writeMapHeader starts a map of n pairs: RESP3's map, or a flat RESP2 array.
func (c *request) writeMapHeader(n int) {
	if c.proto == 3 {
		c.wr.WriteRaw(append(strconv.AppendInt([]byte{'%'}, int64(n), 10), '\r', '\n'))
		return
	}
	c.wr.WriteArray(2 * n)
}

// falseReply is how a script says "no": 0, Lua false (a nil reply), or
// redsync's -1 for a key nobody holds.
type falseReply uint8

const (
	falseZero falseReply = iota
	falseNil
	falseMissing // 0, or -1 when no value holds the key on a quorum
)

// writeFalse writes a script's "no".
func (c *request) writeFalse(f falseReply) {
	if f == falseNil {
		c.writeNull()
		return
	}
	c.wr.WriteInt(0)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// peer is what a command may use of its connection while other commands of
// the pipeline run: its identity (session locks are booked under it) and
// its context and hang-up watch, never its session.
type peer interface {
	ident() int64
	context() context.Context // cancelled when the connection closes
	watchHangup() (leave func())
	refusalBucket() *refusalBucket // the connection's own refusal budget (refusals.go)
	unheld()                       // its last session lock left the book (conn.go)
}

func (c *client) ident() int64                  { return c.id }
func (c *client) context() context.Context      { return c.ctx }
func (c *client) refusalBucket() *refusalBucket { return &c.refused }

// Session accessors handlers share.

// prefix is the user's key prefix, "" for every key.
func (c *session) prefix() string {
	if c.user == nil {
		return ""
	}
	return c.user.Prefix
}

func (c *session) owns(name []byte) bool { return owns(c.prefix(), name) }

// owns reports whether a key or channel belongs to a tenant with prefix.
// A name belongs to exactly one tenant: the one whose prefix starts its
// lock name (lockNameOf). Braces elsewhere in a name do not count, so
// search:{billing:x} is search's alone.
func owns(prefix string, name []byte) bool {
	return prefix == "" || bytes.HasPrefix(lockNameOf(name), []byte(prefix))
}

// derivedPrefixes start the names Redisson derives from a lock's name: its
// release channel, unlock latch and token counter, a read-write lock's
// channel, a fair lock's queue and waiters' timeouts, a semaphore's channel, "<prefix>:{<lock>}[...]", or "<prefix>:<lock>[...]" when the
// lock's name has braces of its own. (A read-write lock's names for its
// readers' timeouts, "{<lock>}...", are never touched: spec.unused.)
var derivedPrefixes = [][]byte{[]byte("redisson_lock__channel:"), []byte("redisson_unlock_latch:"), []byte("redisson_lock_token:"),
	[]byte("redisson_rwlock:"), []byte("redisson_lock_queue:"), []byte("redisson_lock_timeout:"), []byte("redisson_sc:")}

// lockNameOf is the lock name a key or channel belongs with: the name
// itself, or for a name derived from a lock's, that lock's name (what its
// {...} holds, when the rest starts with one).
func lockNameOf(name []byte) []byte {
	for _, p := range derivedPrefixes {
		rest, ok := bytes.CutPrefix(name, p)
		if !ok {
			continue
		}
		if len(rest) > 0 && rest[0] == '{' {
			if j := bytes.IndexByte(rest, '}'); j > 0 {
				return rest[1:j]
			}
		}
		return rest
	}
	return name
}

// tenant names whose scripts, throttles and caches a connection shares: its
// user's name ("" before AUTH or without users).
func (c *session) tenant() string {
	if c.user == nil {
		return ""
	}
	return c.user.Name
}
