package backend

// Reading the replies of the ops that answer more than a yes or no.

import (
	"fmt"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// hashAcquireReply reads the {granted, holds or pttl, token} reply of the hash acquire script.
func hashAcquireReply(val any) quorum.Reply {
	res, ok := val.([]any)
	if ok && len(res) == 3 {
		granted, ok1 := res[0].(int64)
		n, ok2 := res[1].(int64)
		token, ok3 := res[2].(int64)
		if ok1 && ok2 && ok3 {
			return quorum.Reply{OK: granted == 1, N: n, Token: token}
		}
	}
	return quorum.Reply{Err: fmt.Errorf("unexpected reply to the hash acquire script: %v", val)}
}

// pair reads a script's reply of two integers.
func pair(script string, val any) (a, b int64, err error) {
	if res, ok := val.([]any); ok && len(res) == 2 {
		a, ok1 := res[0].(int64)
		b, ok2 := res[1].(int64)
		if ok1 && ok2 {
			return a, b, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply to the %s script: %v", script, val)
}

// hashReleaseReply reads the {result, holds before} reply of the hash release script.
func hashReleaseReply(val any) quorum.Reply {
	code, pre, err := pair("hash release", val)
	return quorum.Reply{OK: err == nil && code == 1, N: code, Pre: pre, Err: err}
}

// raiseReply reads the {counter before, own, noted} reply of the raise script.
func raiseReply(val any) quorum.Reply {
	if res, ok := val.([]any); ok && len(res) == 3 {
		before, ok1 := res[0].(int64)
		own, ok2 := res[1].(int64)
		noted, ok3 := res[2].(int64)
		if ok1 && ok2 && ok3 {
			return quorum.Reply{OK: true, N: before, Own: own == 1, Noted: noted == 1}
		}
	}
	return quorum.Reply{Err: fmt.Errorf("unexpected reply to the raise script: %v", val)}
}

// entryOf reads the {value, pttl[, type]} reply of a read script.
func entryOf(val any) (quorum.Entry, error) {
	res, ok := val.([]any)
	if !ok || len(res) < 2 || len(res) > 4 {
		return quorum.Entry{}, fmt.Errorf("unexpected reply to the read script: %v", val)
	}
	ttl, ok := res[1].(int64)
	if !ok {
		return quorum.Entry{}, fmt.Errorf("unexpected PTTL in the read script's reply: %v", res[1])
	}
	value, found := res[0].(string)
	e := quorum.Entry{Found: found, Value: value, TTL: time.Duration(ttl) * time.Millisecond}
	if len(res) == 4 {
		e.Token, _ = res[3].(int64)
	}
	if len(res) >= 3 {
		typ, _ := res[2].(int64)
		e.Type = quorum.KeyType(typ)
		e.Found = e.Found || e.Type == quorum.TypeHash && ttl != -2
	}
	return e, nil
}
