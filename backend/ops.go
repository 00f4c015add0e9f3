package backend

// How each quorum.Op goes out as a command (a script on the backend), and
// how its reply comes back.

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// keysOf lists the keys a script for op touches.
func keysOf(op quorum.Op) []string {
	switch op.Kind {
	case quorum.OpSetNX:
		switch {
		case op.Fair: // fenced, and waits its turn
			return []string{op.Key, quorum.MetaKey(op.Key), op.Aux, quorum.CountersKey, quorum.WriterKey(op.Aux),
				quorum.QueueKey(op.Key), quorum.QueueLeaseKey(op.Key)}
		case op.Aux != "": // fenced
			return []string{op.Key, quorum.MetaKey(op.Key), op.Aux, quorum.CountersKey, quorum.WriterKey(op.Aux), quorum.QueueKey(op.Key)}
		}
		return []string{op.Key, quorum.MetaKey(op.Key), quorum.QueueKey(op.Key)} // refused while waiters queue
	case quorum.OpDelIfEq:
		if op.Fair { // and tell whether waiters are queued
			return []string{op.Key, quorum.MetaKey(op.Key), quorum.PinKey(op.Key), quorum.QueueKey(op.Key), quorum.QueueLeaseKey(op.Key)}
		}
		return []string{op.Key, quorum.MetaKey(op.Key), quorum.PinKey(op.Key)}
	case quorum.OpQueueTail, quorum.OpEnqueue, quorum.OpQueueBeat, quorum.OpDequeue:
		return []string{quorum.QueueKey(op.Key), quorum.QueueLeaseKey(op.Key)}
	case quorum.OpQueueBeats:
		keys := make([]string, 0, 2*len(*op.Leases))
		for _, l := range *op.Leases {
			keys = append(keys, quorum.QueueKey(l.Key), quorum.QueueLeaseKey(l.Key))
		}
		return keys
	case quorum.OpRenew:
		keys := make([]string, 0, 2*len(*op.Leases))
		for _, l := range *op.Leases {
			keys = append(keys, l.Key, quorum.MetaKey(l.Key))
		}
		return keys
	case quorum.OpUndo, quorum.OpPExpireIfEq, quorum.OpDel, quorum.OpSetXX:
		return []string{op.Key, quorum.MetaKey(op.Key), quorum.PinKey(op.Key)}
	case quorum.OpReattach, quorum.OpUnreattach:
		return []string{op.Key, quorum.MetaKey(op.Key), quorum.PriorKey(op.Key)}
	case quorum.OpUnmark:
		return []string{quorum.MetaKey(op.Key)}
	case quorum.OpHashAcquire: // refused while waiters queue, and during a string lock's lock-delay
		if op.Aux != "" {
			return []string{op.Key, quorum.MetaKey(op.Key), op.Aux, quorum.CountersKey, quorum.WriterKey(op.Aux), quorum.QueueKey(op.Key)}
		}
		return []string{op.Key, quorum.MetaKey(op.Key), quorum.QueueKey(op.Key)}
	case quorum.OpRaise, quorum.OpFixToken:
		if op.Aux != "" { // and note the token beside lock Aux
			return []string{op.Key, quorum.CountersKey, quorum.WriterKey(op.Key), op.Aux, quorum.MetaKey(op.Aux)}
		}
		return []string{op.Key, quorum.CountersKey, quorum.WriterKey(op.Key)}
	}
	if op.Aux != "" {
		return []string{op.Key, op.Aux}
	}
	return []string{op.Key}
}

// command is the script op runs on a backend: which one, over which keys,
// with which arguments.
type command struct {
	s    *script
	keys []string
	args []any
}

func commandOf(op quorum.Op) command {
	keys := keysOf(op)
	script := func(s *script, args ...any) command { return command{s, keys, args} }
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	switch op.Kind {
	case quorum.OpSetNX:
		if op.Fair {
			return script(acquireScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad), ms(op.AuxTTL), op.Value)
		}
		return script(acquireScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad), ms(op.AuxTTL))
	case quorum.OpQueueTail:
		return script(queueScript, "tail")
	case quorum.OpEnqueue:
		return script(queueScript, "add", op.Value, op.N, ms(op.TTL))
	case quorum.OpQueueBeat:
		return script(queueScript, "beat", op.Value, ms(op.TTL))
	case quorum.OpDequeue:
		return script(queueScript, "del", op.Value)
	case quorum.OpQueueBeats:
		args := make([]any, 0, 2*len(*op.Leases))
		for _, l := range *op.Leases {
			args = append(args, l.Value, ms(l.TTL))
		}
		return script(queueBeatsScript, args...)
	case quorum.OpUndo:
		return script(undoScript, op.Value, op.Round)
	case quorum.OpDelIfEq:
		return script(delIfEqScript, op.Value, op.Round, op.Mark)
	case quorum.OpUnmark:
		return script(unmarkScript, op.Value)
	case quorum.OpPExpireIfEq:
		return script(extendScript, op.Value, ms(op.TTL), ms(op.Pad), op.Round, op.N)
	case quorum.OpReattach:
		return script(reattachScript, op.Value, ms(op.TTL), ms(op.Pad), op.Round, op.IfEq)
	case quorum.OpUnreattach:
		return script(unreattachScript, op.Value, op.Round, op.IfEq)
	case quorum.OpRenew:
		if op.N != 1 { // a renewal that restores nothing
			args := make([]any, 0, 5*len(*op.Leases)+1)
			for _, l := range *op.Leases {
				args = append(args, l.Value, ms(l.TTL), ms(l.Pad), l.Round, l.Granted)
			}
			return script(pexpireIfEqScript, append(args, "-")...)
		}
		args := make([]any, 0, 6*len(*op.Leases)+1) // restore, noted with its token part and this lock-delay
		for _, l := range *op.Leases {
			token := cmp.Or(l.Token, "0") // not agreed: a fenced lock's note without its token
			if l.Token == quorum.NoToken {
				token = ""
			}
			args = append(args, l.Value, ms(l.TTL), ms(l.Pad), l.Round, l.Granted, token)
		}
		return script(pexpireIfEqScript, append(args, ms(op.AuxTTL))...)
	case quorum.OpRead:
		return script(getPTTLScript)
	case quorum.OpDel:
		return script(delScript)
	case quorum.OpSetXX:
		if op.IfEq != "" {
			return script(setXXScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad), op.Aux, op.IfEq)
		}
		return script(setXXScript, op.Value, ms(op.TTL), op.Round, ms(op.Pad), op.Aux)
	case quorum.OpHashAcquire:
		return script(hashAcquireScript, op.Value, ms(op.TTL), op.Round)
	case quorum.OpHashRelease:
		return script(hashReleaseScript, op.Value, ms(op.TTL), ms(op.AuxTTL))
	case quorum.OpHashExtend:
		return script(hashExtendScript, op.Value, ms(op.TTL))
	case quorum.OpHashLease:
		return script(hashLeaseScript, ms(op.TTL), [...]string{quorum.LeaseMax: "max", quorum.LeaseSet: "set", quorum.LeaseMin: "min"}[op.N])
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
		if op.Tentative { // a first raise: the token noted tentative
			return script(raiseScript, op.N, op.Round, op.Value, "?")
		}
		return script(raiseScript, op.N, op.Round, op.Value)
	case quorum.OpFixToken:
		return script(raiseScript, op.N, op.Round, op.Value, "fix")
	}
	panic(fmt.Sprintf("quorum: unknown op %d", op.Kind))
}

// replyOf reads one command's outcome (readReply's) as the quorum.Reply for
// op.
func replyOf(op quorum.Op, val any, err error) quorum.Reply {
	if err != nil {
		return quorum.Reply{Err: err}
	}
	switch op.Kind {
	case quorum.OpRead, quorum.OpHashGet:
		e, err := entryOf(val)
		return quorum.Reply{OK: err == nil, Entry: e, Err: err}
	case quorum.OpHashAcquire:
		return hashAcquireReply(val)
	case quorum.OpHashRelease:
		return hashReleaseReply(val)
	case quorum.OpRaise, quorum.OpFixToken:
		return raiseReply(op.Kind, val)
	case quorum.OpRenew, quorum.OpQueueBeats:
		return extendReply(op, val)
	}
	v, err := int64Of(val)
	switch {
	case op.Kind == quorum.OpSetNX && op.Aux != "": // a fenced acquire answers its counter, a fair one how long to wait
		if v > 0 {
			return quorum.Reply{OK: true, Token: v, Err: err}
		}
		return quorum.Reply{N: -v, Err: err}
	case op.Kind == quorum.OpDelIfEq: // 2: deleted, and waiters are queued; plus 2: the note kept, marked
		marked := v >= 3
		if marked {
			v -= 2
		}
		return quorum.Reply{OK: v >= 1, N: v, Noted: marked, Err: err}
	case op.Kind == quorum.OpQueueTail:
		return quorum.Reply{OK: err == nil, N: v, Err: err}
	}
	return quorum.Reply{OK: v == 1, N: v, Err: err}
}

// int64Of reads an integer reply (or a number as a string) as go-redis's
// Cmd.Int64 does.
func int64Of(val any) (int64, error) {
	switch v := val.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("redis: unexpected type=%T for Int64", val)
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
