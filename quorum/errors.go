package quorum

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Sentinel reasons a round fails. A *RoundError wraps exactly one of them,
// so callers branch with errors.Is.
var (
	// ErrTaken: the key holds another value on enough nodes that no quorum
	// can be reached. It is the normal answer for a contended lock.
	ErrTaken = errors.New("taken")
	// ErrNotHeld: a release or extend found the caller's value missing on
	// enough nodes that it cannot hold a quorum.
	ErrNotHeld = errors.New("not held")
	// ErrNoQuorum: too few nodes answered to decide: the lock service is
	// sick, not the lock contended.
	ErrNoQuorum = errors.New("no quorum")
	// ErrValiditySpent: a quorum agreed but the round took so long that the
	// caller would be left less than the minimum validity.
	ErrValiditySpent = errors.New("validity spent")
	// ErrTokenUnsettled: a re-attach found no token that Q holders of the
	// lock note (a fenced acquire's raise, or a first TokenOf, still on its
	// way): it moved nothing; asking again later settles it (Reattach).
	ErrTokenUnsettled = errors.New("token not settled")
	// ErrSuperseded: a re-attach found the lock moved by a re-attach of its
	// owner that arrived after it (a later request, answered or on its
	// way): it moved nothing (Reattach).
	ErrSuperseded = errors.New("superseded by a later re-attach")
	// ErrWriterName: a read-write lock's writer whose name does not end in
	// ":write" (AcquireRW): a node tells a writer by its name.
	ErrWriterName = errors.New("quorum: a read-write lock's writer is named <thread>:write")
	// ErrModeOwner: a hash lock's owner named "mode", the field that holds
	// a read-write lock's mode.
	ErrModeOwner = errors.New(`quorum: "mode" is a read-write lock's field, never an owner`)
	// ErrInvalidTTL: a TTL that is not positive.
	ErrInvalidTTL = errors.New("quorum: ttl must be positive")
	// ErrTTLTooLong: a TTL above the engine's maximum (WithMaxTTL).
	ErrTTLTooLong = errors.New("quorum: ttl exceeds the maximum")
	// ErrTTLTooShort: a TTL below MinTTL, which no round could grant.
	ErrTTLTooShort = errors.New("quorum: ttl below the minimum")
	// ErrNoNodes: New was given no nodes.
	ErrNoNodes = errors.New("quorum: no nodes")
	// ErrNodeTimeout: a node did not answer within its timeout. A
	// *NodeError unwraps to it, never to context.DeadlineExceeded, which
	// stays the caller's ctx.
	ErrNodeTimeout = errors.New("quorum: node timeout")
)

// TTLError is a lock TTL outside what the engine grants; Reason is
// ErrInvalidTTL, ErrTTLTooLong or ErrTTLTooShort. Its text is written for
// the client that asked.
type TTLError struct {
	TTL, Min, Max time.Duration
	MinValidity   time.Duration
	TimeoutFactor float64
	Reason        error
}

func (e *TTLError) Error() string {
	ms := e.TTL.Milliseconds()
	switch e.Reason {
	case ErrTTLTooLong:
		return fmt.Sprintf("lock TTL %d ms exceeds max_ttl %d ms", ms, e.Max.Milliseconds())
	case ErrTTLTooShort:
		return fmt.Sprintf("lock TTL %d ms can never be granted: a lock must outlast min_validity (%d ms) and give "+
			"each backend a millisecond to answer at timeout_factor %g; ask for at least %d ms", ms,
			e.MinValidity.Milliseconds(), e.TimeoutFactor, e.Min.Milliseconds())
	}
	return fmt.Sprintf("lock TTL %d ms must be positive", ms)
}

func (e *TTLError) Unwrap() error { return e.Reason }

// RoundKind is what a round did: it names the round in errors and says
// what a node's "no" meant.
type RoundKind uint8

// The kinds of round.
const (
	RoundAcquire RoundKind = iota + 1
	RoundExtend
	RoundRelease
	RoundDelete
	RoundRead
	RoundFence
	RoundScan
	RoundQueue
)

var roundKinds = [...]struct{ name, done, no string }{
	RoundAcquire: {"acquire", "acquired", "taken"},
	RoundExtend:  {"extend", "extended", "not held"},
	RoundRelease: {"release", "released", "not held"},
	RoundDelete:  {"delete", "answered", "absent"},
	RoundRead:    {"read", "agreed", ""},
	RoundFence:   {"fence", "agreed", "not raised"},
	RoundScan:    {"scan", "agreed", ""},
	RoundQueue:   {"queue", "agreed", "not queued"},
}

func (k RoundKind) String() string { return roundKinds[k].name }

// negative is the reason a quorum of definite "no" answers gives: the
// normal answer for a contended acquire, or a lock the caller lost.
func (k RoundKind) negative() error {
	if k == RoundAcquire {
		return ErrTaken
	}
	return ErrNotHeld
}

// NodeError is one backend's part in a failed round.
type NodeError struct {
	Addr string
	Err  error
}

func (e *NodeError) Error() string { return e.Addr + ": " + describe(e.Err) }
func (e *NodeError) Unwrap() error { return nodeCause(e.Err) }

// nodeCause is what a node's error unwraps to: the node's own deadline is
// ErrNodeTimeout, so that context.DeadlineExceeded means the caller's ctx.
func nodeCause(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrNodeTimeout
	}
	return err
}

// bothErrs is a node's error and a later one (its failed rollback), on one line.
type bothErrs struct{ first, then error }

func (e bothErrs) Error() string   { return describe(e.first) + ", and " + describe(e.then) }
func (e bothErrs) Unwrap() []error { return []error{nodeCause(e.first), nodeCause(e.then)} }

// describe shortens transport errors to the words an operator needs on one line.
func describe(err error) string {
	if both, ok := err.(bothErrs); ok {
		return both.Error()
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrNodeTimeout), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection lost"
	case errors.Is(err, syscall.ENOENT):
		return "no such socket"
	}
	return strings.ReplaceAll(strings.ReplaceAll(err.Error(), "\r", " "), "\n", " ")
}

// RoundError reports a round that did not succeed: why (Reason, a sentinel),
// how many nodes agreed, and what each other node said.
type RoundError struct {
	Op     RoundKind     // what the round did
	Reason error         // ErrTaken, ErrNotHeld, ErrNoQuorum or ErrValiditySpent
	Votes  int           // nodes that agreed
	Nodes  int           // N
	Quorum int           // Q
	Spent  time.Duration // with ErrValiditySpent: how long the round took
	// RetryIn, for a fair acquire found taken, is the soonest a retry may
	// succeed (the holder's TTL or lock-delay, or the lease of the waiter
	// ahead, as the nodes that refused reported); 0 when unknown.
	RetryIn time.Duration
	// NodeErrs holds a *NodeError per node that did not agree, and one per
	// failed rollback, formatted on one line.
	NodeErrs *multierror.Error
}

func (e *RoundError) Error() string { return "quorum: " + e.Op.String() + " " + e.Detail() }

// Detail is the one-line description used in RESP error replies, e.g.
// "2/5 acquired, need 3: 127.0.0.1:7001: timeout; 127.0.0.1:7002: taken".
func (e *RoundError) Detail() string {
	s := fmt.Sprintf("%d/%d %s, need %d", e.Votes, e.Nodes, roundKinds[e.Op].done, e.Quorum)
	if errors.Is(e.Reason, ErrValiditySpent) {
		s += fmt.Sprintf(", but the round took %s and left too little validity", e.Spent.Round(time.Millisecond))
	}
	if e.NodeErrs != nil && len(e.NodeErrs.Errors) > 0 {
		s += ": " + e.NodeErrs.Error()
		if e.youngNode() {
			s += " (backends of a brand-new deployment, never used: run `redlock-proxy bootstrap` once before the replicas; see README, Restart quarantine)"
		}
	}
	return s
}

// youngNode reports whether a node's yes did not count only because it
// started within the quarantine window: a deployment nobody bootstrapped.
func (e *RoundError) youngNode() bool {
	for _, err := range e.NodeErrs.Errors {
		var q *QuarantineError
		if errors.As(err, &q) && q.Young {
			return true
		}
	}
	return false
}

// QuarantineError is why a node's yes could not count toward a quorum.
// Young: the node only started within the quarantine window (never seen
// restarting), as the backends of a new deployment do.
type QuarantineError struct {
	Why   string
	Young bool
}

func (q *QuarantineError) Error() string { return q.Why }

func (e *RoundError) Unwrap() []error {
	if e.NodeErrs == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.NodeErrs}
}

// oneLine formats a multierror on a single line, as RESP error replies need.
func oneLine(es []error) string {
	parts := make([]string, len(es))
	for i, err := range es {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

// addNodeErrs adds per-node errors (such as failed rollbacks) to e; a node
// already named gets the new reason joined to its entry, so that each node
// appears once in a reply.
func (e *RoundError) addNodeErrs(more *multierror.Error) {
	if more == nil {
		return
	}
	if e.NodeErrs == nil {
		e.NodeErrs = &multierror.Error{ErrorFormat: oneLine}
	}
next:
	for _, err := range more.Errors {
		var add *NodeError
		if errors.As(err, &add) {
			for i, have := range e.NodeErrs.Errors {
				var old *NodeError
				if errors.As(have, &old) && old.Addr == add.Addr {
					e.NodeErrs.Errors[i] = &NodeError{Addr: old.Addr, Err: bothErrs{old.Err, add.Err}}
					continue next
				}
			}
		}
		e.NodeErrs.Errors = append(e.NodeErrs.Errors, err)
	}
}

// errString is a plain per-node reason such as "taken".
type errString string

func (e errString) Error() string { return string(e) }

// duplicateError answers for a node that is another node's server under a
// second address: nothing is sent there, so no server votes twice.
type duplicateError struct{ of string }

func (d *duplicateError) Error() string {
	return "same server as " + d.of + " (same run_id): not counted; list each server once"
}

// errDown answers for a node the health monitor knows is down: the round
// does not wait for it, and nothing was sent there.
var errDown = errors.New("down")
