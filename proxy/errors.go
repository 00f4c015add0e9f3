package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// respError is an error whose text is the exact RESP error reply, code first.
type respError string

func (e respError) Error() string { return string(e) }

// Replies clients parse by prefix: Redis's own texts where Redis has one.

// Authentication and permissions.
var (
	errNoAuth      = respError("NOAUTH Authentication required.")
	errWrongPass   = respError("WRONGPASS invalid username-password pair or user is disabled.")
	errNoPassword  = respError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	errNoPerm      = respError("NOPERM this user has no permissions to access one of the keys used as arguments")
	errChannelPerm = respError("NOPERM this user has no permissions to access one of the channels used as arguments")
)

// Commands Redis has and the proxy serves otherwise, or not at all.
var (
	errMaxClients = respError("ERR max number of clients reached")
	errClusterOff = respError("ERR This instance has cluster support disabled")

	errNoScript = respError("NOSCRIPT No matching script. Please use EVAL.")
)

// Arguments.
var (
	errSyntax        = respError("ERR syntax error")
	errNotInteger    = respError("ERR value is not an integer or out of range")
	errWrongType     = respError("WRONGTYPE Operation against a key holding the wrong kind of value")
	errLockWriteOnly = respError("ERR redlock-proxy takes SET only as a lock command: SET key value NX PX <ms> (or EX <s>) to acquire, " +
		"SET key value XX PX <ms> to overwrite a lock, SET key value IFEQ value PX <ms> to renew; plain SET, KEEPTTL and GET would bypass the lock protocol")
)

// ttlBeyond is a TTL in ms that Redis accepts but no time.Duration holds;
// writeErr refuses it as over max_ttl, in the engine's words, naming
// max_ttl's value.
type ttlBeyond int64

func (ms ttlBeyond) Error() string { return ms.Unwrap().Error() }

func (ms ttlBeyond) Unwrap() error {
	return respError(fmt.Sprintf("ERR lock TTL %d ms exceeds max_ttl", int64(ms)))
}

func (ms ttlBeyond) overMax(max time.Duration) error {
	return respError(fmt.Sprintf("ERR lock TTL %d ms exceeds max_ttl %d ms", int64(ms), max.Milliseconds()))
}

func errInvalidExpire(cmd string) error {
	return respError(fmt.Sprintf("ERR invalid expire time in '%s' command", cmd))
}

func errWrongArity(name string) error {
	return respError(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name))
}

func errForceRelease(what string) error {
	return respError(fmt.Sprintf("ERR %s is disabled here (allow_force_release: false): release a lock with its owner's compare-and-delete script", what))
}

func errSubscribed(name string) error {
	return respError(fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", name))
}

func unknownSubcommand(sub []byte, cmd string) error {
	return respError(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", truncate(sub, 128), cmd))
}

func unknownScript(sha string) error {
	return respError(fmt.Sprintf("ERR unknown script %s: redlock-proxy runs only lock scripts it recognises and never forwards "+
		"one; an operator can register it under scripts: in the config (sha1, meaning: release|extend|acquire, key, owner, ttl) "+
		"with its reply convention (granted, and taken or not_held: what the script answers in each case), which is required: "+
		"the proxy answers in it, and a reply of another shape can read to the client as a grant", sha))
}

// unknownCommand is Redis's text for an unknown command, to the byte:
// clients match on it (ioredis and rueidis fall back from HELLO by it, some
// parse the arguments back), so the proxy's hint is in REDLOCK HELP, not
// here. As Redis does, arguments are quoted while the list is shorter than
// 128 bytes, each cut to what is left of them.
func unknownCommand(args [][]byte) error {
	var list strings.Builder
	for _, a := range args[1:] {
		if list.Len() >= 128 {
			break
		}
		fmt.Fprintf(&list, "'%s' ", truncate(a, 128-list.Len()))
	}
	return respError(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", truncate(args[0], 128), list.String()))
}

// replyText maps any error a handler meets to one RESP error line, starting
// with an upper-case code. Every error reply the proxy writes goes through it.
func replyText(err error) string {
	if re, ok := err.(respError); ok { // the common case, without errors.As's reflection: refusals stay cheap
		return oneLine(string(re))
	}
	var (
		re   respError
		rerr *quorum.RoundError
		terr *quorum.TTLError
	)
	switch {
	case errors.As(err, &re):
		return oneLine(string(re))
	case errors.As(err, &rerr):
		return oneLine("NOQUORUM " + rerr.Detail())
	case errors.As(err, &terr):
		return oneLine("ERR " + terr.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "ERR request cancelled: " + oneLine(err.Error())
	}
	return oneLine("ERR " + err.Error())
}

// oneLine keeps an error reply from breaking the RESP framing.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
