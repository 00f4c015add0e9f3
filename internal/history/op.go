package history

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// Kind is what an operation asked for.
type Kind string

// The kinds of operation a history holds.
const (
	Acquire Kind = "acquire" // SET NX PX, LOCK.ACQUIRE, a Redisson lock script...
	Release Kind = "release" // compare-and-delete, LOCK.RELEASE, Redisson unlock
	Extend  Kind = "extend"  // compare-and-pexpire, LOCK.EXTEND, Redisson renewal
	Token   Kind = "token"   // LOCK.TOKEN: the fencing token of a lock held
)

// Outcome is what the client was told.
type Outcome string

// The outcomes. Unknown covers every answer that leaves the effect open
// (NOQUORUM, a timeout, a closed connection): the operation may or may not
// have taken effect, and a checker must allow both.
const (
	OK      Outcome = "ok"       // granted, released, extended, token read
	Taken   Outcome = "taken"    // acquire refused: another owner holds it
	NotHeld Outcome = "not_held" // release/extend/token refused: caller is not the owner
	Unknown Outcome = "unknown"  // NOQUORUM, timeout, connection lost, any error
)

// Op is one operation as its client saw it. Times are offsets from the
// history's start on the recorder's monotonic clock: Invoke just before the
// request was written, Return just after the reply was read.
type Op struct {
	Client  string        `json:"client"`          // who sent it (connection or goroutine name)
	Via     string        `json:"via,omitempty"`   // which replica it went through
	Key     string        `json:"key"`             // the lock's name
	Kind    Kind          `json:"kind"`            //
	Owner   string        `json:"owner"`           // the lock value / owner id sent
	TTL     time.Duration `json:"ttl,omitempty"`   // asked for (acquire, extend)
	Delay   time.Duration `json:"delay,omitempty"` // lock-delay asked for (LOCK.ACQUIRE ... DELAY)
	Invoke  time.Duration `json:"invoke"`          //
	Return  time.Duration `json:"return"`          //
	Outcome Outcome       `json:"outcome"`         //
	Token   int64         `json:"token,omitempty"` // the fencing token answered, 0 if none
	Error   string        `json:"error,omitempty"` // the error text of an Unknown outcome
	// Shared: an acquire of a read-write lock's read side; shared holds
	// may overlap each other, never another hold.
	Shared bool `json:"shared,omitempty"`
}

// Write writes ops as JSON lines, one op per line, the form Read reads back
// and a failing run leaves behind for replay.
func Write(w io.Writer, ops []Op) error {
	enc := json.NewEncoder(w)
	for i := range ops {
		if err := enc.Encode(&ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// Read reads JSON lines written by Write.
func Read(r io.Reader) ([]Op, error) {
	var ops []Op
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var op Op
		if err := dec.Decode(&op); err == io.EOF {
			return ops, nil
		} else if err != nil {
			return ops, err
		}
		ops = append(ops, op)
	}
}
