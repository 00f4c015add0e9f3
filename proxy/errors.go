package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// respError is an error whose text is the exact RESP error reply, code first.
type respError string

func (e respError) Error() string { return string(e) }

// Replies clients parse by prefix: Redis's own texts where Redis has one.
var (
	errSyntax        = respError("ERR syntax error")
	errNotInteger    = respError("ERR value is not an integer or out of range")
	errNoAuth        = respError("NOAUTH Authentication required.")
	errWrongPass     = respError("WRONGPASS invalid username-password pair or user is disabled.")
	errNoPassword    = respError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	errNoScript      = respError("NOSCRIPT No matching script. Please use EVAL.")
	errMaxClients    = respError("ERR max number of clients reached")
	errClusterOff    = respError("ERR This instance has cluster support disabled")
	errDBIndex       = respError("ERR DB index is out of range (redlock-proxy serves database 0 only)")
	errLockWriteOnly = respError("ERR redlock-proxy takes SET only as a lock command: SET key value NX PX <ms> (or EX <s>) to acquire, " +
		"SET key value XX PX <ms> to overwrite a lock, SET key value IFEQ value PX <ms> to renew; plain SET, KEEPTTL and GET would bypass the lock protocol")
)

func errInvalidExpire(cmd string) error {
	return respError(fmt.Sprintf("ERR invalid expire time in '%s' command", cmd))
}

func errWrongArity(name string) error {
	return respError(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name))
}

// replyText maps any error a handler meets to one RESP error line, starting
// with an upper-case code.
func replyText(err error) string {
	var (
		re   respError
		rerr *quorum.RoundError
	)
	switch {
	case errors.As(err, &re):
		return oneLine(string(re))
	case errors.As(err, &rerr):
		return oneLine("NOQUORUM " + rerr.Detail())
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
