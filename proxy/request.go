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

// request is one command being answered: the connection's session plus the
// writer its reply goes to, which is the connection's own, or a buffer of
// its own when it runs beside other commands of a pipeline. Its ctx carries
// the moment the command arrived (quorum.WithArrival).
type request struct {
	*client
	ctx     context.Context
	arrived time.Time
	wr      *redcon.Writer
	mark    int // where its reply starts in wr

	grantsMu sync.Mutex
	grants   []quorum.Grant // what its reply says was granted
	sessions []sessionKey   // session locks its grants booked
}

func (c *client) newRequest(wr *redcon.Writer, arrived time.Time) *request {
	return &request{client: c, ctx: quorum.WithArrival(c.ctx, arrived), arrived: arrived, wr: wr, mark: len(wr.Buffer())}
}

// The reply writers handlers share. Replies whose encoding differs between
// RESP2 and RESP3 are written here; everything else (simple strings,
// errors, integers, bulk strings, arrays) is the same in both.

// writeErr writes err as one RESP error line (replyText).
func (c *request) writeErr(err error) {
	var beyond ttlBeyond
	if errors.As(err, &beyond) && c.client != nil && c.s != nil {
		err = beyond.overMax(c.s.engine.MaxTTL())
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

// Session accessors handlers share.

// prefix is the user's key prefix, "" for every key.
func (c *client) prefix() string {
	if c.user == nil {
		return ""
	}
	return c.user.Prefix
}

func (c *client) owns(name []byte) bool { return owns(c.prefix(), name) }

// owns reports whether a key or channel belongs to a tenant with prefix:
// the name starts with it, or the part inside its first {...} does, as in
// Redisson's redisson_lock__channel:{<lock>} and redisson_unlock_latch:{<lock>}:id.
func owns(prefix string, name []byte) bool {
	if prefix == "" || bytes.HasPrefix(name, []byte(prefix)) {
		return true
	}
	if i := bytes.IndexByte(name, '{'); i >= 0 {
		if j := bytes.IndexByte(name[i+1:], '}'); j > 0 {
			return bytes.HasPrefix(name[i+1:i+1+j], []byte(prefix))
		}
	}
	return false
}

// tenant names whose scripts, throttles and caches a connection shares: its
// user's name ("" before AUTH or without users).
func (c *client) tenant() string {
	if c.user == nil {
		return ""
	}
	return c.user.Name
}
