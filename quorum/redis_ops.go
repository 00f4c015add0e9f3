package quorum

// How RedisNode encodes each Op as a command and reads its reply.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// keysOf lists the keys a script for op touches.
func keysOf(op Op) []string {
	switch op.Kind {
	case OpSetNX, OpUndo, OpDelIfEq, OpPExpireIfEq, OpSetXX, OpDel:
		return []string{op.Key, MetaKey(op.Key)}
	case OpHashAcquire:
		if op.Aux != "" {
			return []string{op.Key, op.Aux, CountersKey}
		}
	case OpRaise:
		return []string{op.Key, CountersKey}
	}
	if op.Aux != "" {
		return []string{op.Key, op.Aux}
	}
	return []string{op.Key}
}

func queue(ctx context.Context, pipe redis.Pipeliner, op Op, eval bool) redis.Cmder {
	keys := keysOf(op)
	script := func(s *redis.Script, args ...any) redis.Cmder {
		if eval {
			return s.Eval(ctx, pipe, keys, args...)
		}
		return s.EvalSha(ctx, pipe, keys, args...)
	}
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	switch op.Kind {
	case OpSetNX:
		return script(acquireScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad))
	case OpUndo:
		return script(undoScript, op.Value, op.Round)
	case OpDelIfEq:
		return script(delIfEqScript, op.Value)
	case OpPExpireIfEq:
		return script(pexpireIfEqScript, op.Value, ms(op.TTL), ms(op.Pad))
	case OpRead:
		return script(getPTTLScript)
	case OpDel:
		return script(delScript)
	case OpSetXX:
		return script(setXXScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad))
	case OpHashAcquire:
		return script(hashAcquireScript, op.Value, ms(op.TTL))
	case OpHashRelease:
		return script(hashReleaseScript, op.Value, ms(op.TTL), ms(op.AuxTTL))
	case OpHashExtend:
		return script(hashExtendScript, op.Value, ms(op.TTL))
	case OpHashUnhold:
		all := "1"
		if op.N == 0 {
			all = "all"
		}
		return script(hashUnholdScript, op.Value, all, ms(op.AuxTTL), "1")
	case OpHashSetHolds:
		return script(hashSetHoldsScript, op.Value, op.N, ms(op.TTL), ms(op.AuxTTL), "0")
	case OpHashGet:
		return script(hashGetScript, op.Value)
	case OpRaise:
		return script(raiseScript, op.N)
	}
	panic(fmt.Sprintf("quorum: unknown op %d", op.Kind))
}

// replyOf reads one command's outcome as the Reply for op.
func replyOf(op Op, cmd redis.Cmder) Reply {
	err := cmd.Err()
	switch op.Kind {
	case OpRead, OpHashGet:
		if err != nil {
			return Reply{Err: err}
		}
		e, err := entryOf(cmd.(*redis.Cmd).Val())
		return Reply{OK: err == nil, Entry: e, Err: err}
	case OpHashAcquire:
		if err != nil {
			return Reply{Err: err}
		}
		return hashAcquireReply(cmd.(*redis.Cmd).Val())
	case OpHashRelease:
		if err != nil {
			return Reply{Err: err}
		}
		return hashReleaseReply(cmd.(*redis.Cmd).Val())
	}
	if err != nil {
		return Reply{Err: err}
	}
	var v int64
	switch c := cmd.(type) {
	case *redis.Cmd:
		v, err = c.Int64()
	case *redis.IntCmd:
		v = c.Val()
	}
	return Reply{OK: v == 1, N: v, Err: err}
}

// hashAcquireReply reads the {granted, holds or pttl, token} reply of the hash acquire script.
func hashAcquireReply(val any) Reply {
	res, ok := val.([]any)
	if ok && len(res) == 3 {
		granted, ok1 := res[0].(int64)
		n, ok2 := res[1].(int64)
		token, ok3 := res[2].(int64)
		if ok1 && ok2 && ok3 {
			return Reply{OK: granted == 1, N: n, Token: token}
		}
	}
	return Reply{Err: fmt.Errorf("unexpected reply to the hash acquire script: %v", val)}
}

// hashReleaseReply reads the {result, holds before} reply of the hash release script.
func hashReleaseReply(val any) Reply {
	if res, ok := val.([]any); ok && len(res) == 2 {
		code, ok1 := res[0].(int64)
		pre, ok2 := res[1].(int64)
		if ok1 && ok2 {
			return Reply{OK: code == 1, N: code, Pre: pre}
		}
	}
	return Reply{Err: fmt.Errorf("unexpected reply to the hash release script: %v", val)}
}

// entryOf reads the {value, pttl[, type]} reply of a read script.
func entryOf(val any) (Entry, error) {
	res, ok := val.([]any)
	if !ok || len(res) < 2 || len(res) > 3 {
		return Entry{}, fmt.Errorf("unexpected reply to the read script: %v", val)
	}
	ttl, ok := res[1].(int64)
	if !ok {
		return Entry{}, fmt.Errorf("unexpected PTTL in the read script's reply: %v", res[1])
	}
	value, found := res[0].(string)
	e := Entry{Found: found, Value: value, TTL: time.Duration(ttl) * time.Millisecond}
	if len(res) == 3 {
		typ, _ := res[2].(int64)
		e.Type = KeyType(typ)
		e.Found = e.Found || e.Type == TypeHash && ttl != -2
	}
	return e, nil
}
