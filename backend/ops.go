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

// keysOf appends the keys a script for op touches.
func (e *encoder) keysOf(op quorum.Op) {
	switch op.Kind {
	case quorum.OpSetNX:
		switch {
		case op.Fair: // fenced, and waits its turn
			e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{"", op.Aux}, key{"", quorum.CountersKey}, key{writerP, op.Aux},
				key{queueP, op.Key}, key{queueLeaseP, op.Key})
			return
		case op.Aux != "": // fenced
			e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{"", op.Aux}, key{"", quorum.CountersKey}, key{writerP, op.Aux}, key{queueP, op.Key})
			return
		}
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{queueP, op.Key}) // refused while waiters queue
		return
	case quorum.OpDelIfEq:
		if op.Fair { // and tell whether waiters are queued
			e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{pinP, op.Key}, key{queueP, op.Key}, key{queueLeaseP, op.Key})
			return
		}
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{pinP, op.Key})
		return
	case quorum.OpQueueTail, quorum.OpEnqueue, quorum.OpQueueBeat, quorum.OpDequeue, quorum.OpQueueHead:
		e.keys = append(e.keys, key{queueP, op.Key}, key{queueLeaseP, op.Key})
		return
	case quorum.OpQueueBeats:
		for _, l := range *op.Leases {
			e.keys = append(e.keys, key{queueP, l.Key}, key{queueLeaseP, l.Key})
		}
		return
	case quorum.OpSemaphore:
		e.keys = append(e.keys, key{semP, op.Key}, key{semLeaseP, op.Key}, key{semGoneP, op.Key})
		return
	case quorum.OpRenew:
		for _, l := range *op.Leases {
			e.keys = append(e.keys, key{"", l.Key}, key{metaP, l.Key})
		}
		return
	case quorum.OpDel, quorum.OpPrint:
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{pinP, op.Key})
		return
	case quorum.OpUndo, quorum.OpPExpireIfEq, quorum.OpSetXX, quorum.OpHashLease: // a hash lease's third key: for its print
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{pinP, op.Key})
		return
	case quorum.OpReattach:
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key})
		return
	case quorum.OpUnmark:
		e.keys = append(e.keys, key{metaP, op.Key})
		return
	case quorum.OpDelLatch:
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{"", quorum.CountersKey}, key{semP, op.Key})
		return
	case quorum.OpHashRelease, quorum.OpHashUnhold, quorum.OpHashSetHolds, quorum.OpHashExtend, quorum.OpHashGet:
		// the lock's note follows it (a read-write lock's holders: the scripts name them)
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key})
		if op.Aux != "" { // an unlock latch
			e.keys = append(e.keys, key{"", op.Aux})
		}
		return
	case quorum.OpHashAcquire: // refused while waiters queue, and during a string lock's lock-delay
		if op.Fair { // waits its turn in the queue Aux
			e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{queueP, op.Aux}, key{queueLeaseP, op.Aux})
			return
		}
		if op.Aux != "" {
			e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{"", op.Aux}, key{"", quorum.CountersKey}, key{writerP, op.Aux}, key{queueP, op.Key})
			return
		}
		e.keys = append(e.keys, key{"", op.Key}, key{metaP, op.Key}, key{queueP, op.Key})
		return
	case quorum.OpRaise, quorum.OpFixToken:
		if op.Aux != "" { // and note the token beside lock Aux
			e.keys = append(e.keys, key{"", op.Key}, key{"", quorum.CountersKey}, key{writerP, op.Key}, key{"", op.Aux}, key{metaP, op.Aux})
			return
		}
		e.keys = append(e.keys, key{"", op.Key}, key{"", quorum.CountersKey}, key{writerP, op.Key})
		return
	}
	if op.Aux != "" {
		e.keys = append(e.keys, key{"", op.Key}, key{"", op.Aux})
		return
	}
	e.keys = append(e.keys, key{"", op.Key})
}

// command sets e's keys and arguments to those of the script op runs on a
// backend, and returns the script.
func (e *encoder) command(op quorum.Op) *script {
	e.keys, e.args = e.keys[:0], e.args[:0]
	e.keysOf(op)
	script := func(s *script, args ...arg) *script { e.args = append(e.args, args...); return s }
	ms := func(d time.Duration) arg { return num(d.Milliseconds()) }
	switch op.Kind {
	case quorum.OpSetNX:
		if op.Fair {
			return script(acquireScript, str(op.Value), ms(op.TTL), str(op.Round), ms(op.Pad), ms(op.AuxTTL), str(op.Value))
		}
		return script(acquireScript, str(op.Value), ms(op.TTL), str(op.Round), ms(op.Pad), ms(op.AuxTTL))
	case quorum.OpQueueTail:
		return script(queueScript, str("tail"))
	case quorum.OpEnqueue:
		if op.Fair { // the ticket set even where another is
			return script(queueScript, str("set"), str(op.Value), num(op.N), ms(op.TTL))
		}
		return script(queueScript, str("add"), str(op.Value), num(op.N), ms(op.TTL))
	case quorum.OpQueueBeat:
		return script(queueScript, str("beat"), str(op.Value), ms(op.TTL))
	case quorum.OpDequeue:
		if op.N > 0 { // only the place with that ticket
			return script(queueScript, str("del"), str(op.Value), num(op.N))
		}
		return script(queueScript, str("del"), str(op.Value))
	case quorum.OpQueueHead:
		return script(queueScript, str("head"))
	case quorum.OpSemaphore:
		switch op.Mode {
		case "take":
			return script(semaphoreScript, str("take"), str(op.Value), ms(op.TTL), num(op.N), str(op.Round))
		case "undo":
			return script(semaphoreScript, str("undo"), str(op.Value), str(op.Round))
		case "lease":
			return script(semaphoreScript, str("lease"), str(op.Value), ms(op.TTL), num(op.N))
		case "init", "repair":
			return script(semaphoreScript, str(op.Mode), num(op.N), str(op.Round))
		}
		return script(semaphoreScript, str(op.Mode), str(op.Value)) // drop, state, ver
	case quorum.OpQueueBeats:
		for _, l := range *op.Leases {
			e.args = append(e.args, str(l.Value), ms(l.TTL))
		}
		return queueBeatsScript
	case quorum.OpUndo:
		return script(undoScript, str(op.Value), str(op.Round))
	case quorum.OpDelIfEq:
		return script(delIfEqScript, str(op.Value), str(op.Round), str(op.Mark))
	case quorum.OpUnmark:
		return script(unmarkScript, str(op.Value))
	case quorum.OpDelLatch:
		return script(delLatchScript)
	case quorum.OpPExpireIfEq:
		return script(extendScript, str(op.Value), ms(op.TTL), ms(op.Pad), str(op.Round), num(op.N))
	case quorum.OpReattach:
		return script(reattachScript, str(op.Value), ms(op.TTL), ms(op.Pad), str(op.Round), str(op.IfEq))
	case quorum.OpRenew:
		if op.N != 1 { // a renewal that restores nothing
			for _, l := range *op.Leases {
				e.args = append(e.args, str(l.Value), ms(l.TTL), ms(l.Pad), str(l.Round), num(l.Granted))
			}
			return script(pexpireIfEqScript, str("-"))
		}
		for _, l := range *op.Leases { // restore, noted with its token part and this lock-delay
			token := cmp.Or(l.Token, "0") // not agreed: a fenced lock's note without its token
			if l.Token == quorum.NoToken {
				token = ""
			}
			e.args = append(e.args, str(l.Value), ms(l.TTL), ms(l.Pad), str(l.Round), num(l.Granted), str(token))
		}
		return script(pexpireIfEqScript, ms(op.TTL), ms(op.AuxTTL))
	case quorum.OpRead:
		return script(getPTTLScript)
	case quorum.OpPrint:
		return script(delScript, str("?"), str(op.Mode))
	case quorum.OpDel:
		return script(delScript, str(op.Value), str(op.Mode), str(op.Aux))
	case quorum.OpSetXX:
		return script(setXXScript, str(op.Value), ms(op.TTL), str(op.Round), ms(op.Pad), str(op.Aux), str(op.IfEq), ms(op.AuxTTL), str(op.Mark))
	case quorum.OpHashAcquire:
		if op.Fair { // no mode, and the waiter's lease
			return script(hashAcquireScript, str(op.Value), ms(op.TTL), str(op.Round), ms(op.AuxTTL), str(""), num(op.N))
		}
		return e.withMode(script(hashAcquireScript, str(op.Value), ms(op.TTL), str(op.Round), ms(op.AuxTTL)), op.Mode)
	case quorum.OpHashRelease:
		if op.N == 1 { // the mode ("" none) and the absent lock's latch
			return script(hashReleaseScript, str(op.Value), ms(op.TTL), ms(op.AuxTTL), str(op.Mark), str(op.Mode), str("1"))
		}
		return e.withMode(script(hashReleaseScript, str(op.Value), ms(op.TTL), ms(op.AuxTTL), str(op.Mark)), op.Mode)
	case quorum.OpHashExtend:
		return script(hashExtendScript, str(op.Value), ms(op.TTL))
	case quorum.OpHashLease:
		return script(hashLeaseScript, ms(op.TTL), str([...]string{quorum.LeaseMax: "max", quorum.LeaseSet: "set", quorum.LeaseMin: "min"}[op.N]), str(op.Mark))
	case quorum.OpHashUnhold:
		all := "1"
		switch {
		case op.N == 0:
			all = "all"
		case op.N < 0: // a late release's probe for its mark (quorum finishLate)
			all = "probe"
		}
		return script(hashUnholdScript, str(op.Value), str(all), ms(op.AuxTTL), str("1"), str(op.Mark))
	case quorum.OpHashSetHolds:
		return e.withMode(script(hashSetHoldsScript, str(op.Value), num(op.N), ms(op.TTL), ms(op.AuxTTL), str("0"), str(op.Mark)), op.Mode)
	case quorum.OpHashGet:
		if op.N == 1 { // is it read-locked
			return script(hashGetScript, str(""), str("read-locked"))
		}
		return script(hashGetScript, str(op.Value))
	case quorum.OpRaise:
		if op.Tentative { // a first raise: the token noted tentative
			return script(raiseScript, num(op.N), str(op.Round), str(op.Value), str("?"))
		}
		return script(raiseScript, num(op.N), str(op.Round), str(op.Value))
	case quorum.OpFixToken:
		return script(raiseScript, num(op.N), str(op.Round), str(op.Value), str("fix"))
	}
	panic(fmt.Sprintf("quorum: unknown op %d", op.Kind))
}

// withMode appends a read-write lock's mode as the last argument of s's call,
// which a plain lock's call goes without (each argument costs the server).
func (e *encoder) withMode(s *script, mode string) *script {
	if mode != "" {
		e.args = append(e.args, str(mode))
	}
	return s
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
	case quorum.OpPrint:
		return printReply(val)
	case quorum.OpQueueHead:
		w, ok := val.(string)
		if !ok {
			return quorum.Reply{Err: fmt.Errorf("queue head: unexpected reply %T", val)}
		}
		return quorum.Reply{OK: true, Entry: quorum.Entry{Found: w != "", Value: w}}
	case quorum.OpHashRelease:
		return hashReleaseReply(val)
	case quorum.OpSemaphore:
		return semaphoreReply(op, val)
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
