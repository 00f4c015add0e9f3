package backend

// How Node encodes each quorum.Op as a command and reads its reply.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// keysOf lists the keys a script for op touches.
func keysOf(op quorum.Op) []string {
	switch op.Kind {
	case quorum.OpSetNX, quorum.OpUndo, quorum.OpDelIfEq, quorum.OpPExpireIfEq, quorum.OpSetXX, quorum.OpDel:
		return []string{op.Key, quorum.MetaKey(op.Key)}
	case quorum.OpHashAcquire:
		if op.Aux != "" {
			return []string{op.Key, op.Aux, quorum.CountersKey}
		}
	case quorum.OpRaise:
		return []string{op.Key, quorum.CountersKey}
	}
	if op.Aux != "" {
		return []string{op.Key, op.Aux}
	}
	return []string{op.Key}
}

func queue(ctx context.Context, pipe redis.Pipeliner, op quorum.Op, eval bool) redis.Cmder {
	keys := keysOf(op)
	script := func(s *redis.Script, args ...any) redis.Cmder {
		if eval {
			return s.Eval(ctx, pipe, keys, args...)
		}
		return s.EvalSha(ctx, pipe, keys, args...)
	}
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	switch op.Kind {
	case quorum.OpSetNX:
		return script(acquireScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad))
	case quorum.OpUndo:
		return script(undoScript, op.Value, op.Round)
	case quorum.OpDelIfEq:
		return script(delIfEqScript, op.Value)
	case quorum.OpPExpireIfEq:
		return script(pexpireIfEqScript, op.Value, ms(op.TTL), ms(op.Pad))
	case quorum.OpRead:
		return script(getPTTLScript)
	case quorum.OpDel:
		return script(delScript)
	case quorum.OpSetXX:
		return script(setXXScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad))
	case quorum.OpHashAcquire:
		return script(hashAcquireScript, op.Value, ms(op.TTL))
	case quorum.OpHashRelease:
		return script(hashReleaseScript, op.Value, ms(op.TTL), ms(op.AuxTTL))
	case quorum.OpHashExtend:
		return script(hashExtendScript, op.Value, ms(op.TTL))
	case quorum.OpHashUnhold:
		all := "1"
		if op.N == 0 {
			all = "all"
		}
		return script(hashUnholdScript, op.Value, all, ms(op.AuxTTL), "1")
	case quorum.OpHashSetHolds:
		return script(hashSetHoldsScript, op.Value, op.N, ms(op.TTL), ms(op.AuxTTL), "0")
	case quorum.OpHashGet:
		return script(hashGetScript, op.Value)
	case quorum.OpRaise:
		return script(raiseScript, op.N)
	}
	panic(fmt.Sprintf("quorum: unknown op %d", op.Kind))
}

// replyOf reads one command's outcome as the quorum.Reply for op.
func replyOf(op quorum.Op, cmd redis.Cmder) quorum.Reply {
	err := sortErr(cmd.Err())
	switch op.Kind {
	case quorum.OpRead, quorum.OpHashGet:
		if err != nil {
			return quorum.Reply{Err: err}
		}
		e, err := entryOf(cmd.(*redis.Cmd).Val())
		return quorum.Reply{OK: err == nil, Entry: e, Err: err}
	case quorum.OpHashAcquire:
		if err != nil {
			return quorum.Reply{Err: err}
		}
		return hashAcquireReply(cmd.(*redis.Cmd).Val())
	case quorum.OpHashRelease:
		if err != nil {
			return quorum.Reply{Err: err}
		}
		return hashReleaseReply(cmd.(*redis.Cmd).Val())
	}
	if err != nil {
		return quorum.Reply{Err: err}
	}
	var v int64
	switch c := cmd.(type) {
	case *redis.Cmd:
		v, err = c.Int64()
	case *redis.IntCmd:
		v = c.Val()
	}
	return quorum.Reply{OK: v == 1, N: v, Err: err}
}

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

// hashReleaseReply reads the {result, holds before} reply of the hash release script.
func hashReleaseReply(val any) quorum.Reply {
	if res, ok := val.([]any); ok && len(res) == 2 {
		code, ok1 := res[0].(int64)
		pre, ok2 := res[1].(int64)
		if ok1 && ok2 {
			return quorum.Reply{OK: code == 1, N: code, Pre: pre}
		}
	}
	return quorum.Reply{Err: fmt.Errorf("unexpected reply to the hash release script: %v", val)}
}

// entryOf reads the {value, pttl[, type]} reply of a read script.
func entryOf(val any) (quorum.Entry, error) {
	res, ok := val.([]any)
	if !ok || len(res) < 2 || len(res) > 3 {
		return quorum.Entry{}, fmt.Errorf("unexpected reply to the read script: %v", val)
	}
	ttl, ok := res[1].(int64)
	if !ok {
		return quorum.Entry{}, fmt.Errorf("unexpected PTTL in the read script's reply: %v", res[1])
	}
	value, found := res[0].(string)
	e := quorum.Entry{Found: found, Value: value, TTL: time.Duration(ttl) * time.Millisecond}
	if len(res) == 3 {
		typ, _ := res[2].(int64)
		e.Type = quorum.KeyType(typ)
		e.Found = e.Found || e.Type == quorum.TypeHash && ttl != -2
	}
	return e, nil
}

// sortErr tells the engine a server's error reply (*quorum.ReplyError: the
// link is fine) from a transport failure, which it returns as it is.
func sortErr(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return &quorum.ReplyError{Msg: rerr.Error()}
	}
	return err
}
