package quorum

import (
	"github.com/hashicorp/go-multierror"
)

// vote is one node's answer to a yes/no step of a round.
type vote uint8

const (
	pending vote = iota // not answered yet
	yes                 // did it (set, deleted, extended)
	no                  // definitely did not (key absent or held by another value)
	failed              // error or timeout: unknown whether it did
)

// tally counts the votes of a yes/no round.
type tally struct {
	votes                     []vote
	errs                      []error
	quorum                    int
	nYes, nNo, nFail, nWaited int
}

func newTally(n, quorum int) *tally {
	return &tally{votes: make([]vote, n), errs: make([]error, n), quorum: quorum}
}

func (t *tally) add(r result[bool]) {
	t.nWaited++
	switch {
	case r.err != nil:
		t.votes[r.node], t.errs[r.node] = failed, r.err
		t.nFail++
	case r.val:
		t.votes[r.node] = yes
		t.nYes++
	default:
		t.votes[r.node] = no
		t.nNo++
	}
}

// decided: the outcome can no longer change, either way.
func (t *tally) decided() bool {
	open := len(t.votes) - t.nWaited
	return t.nYes >= t.quorum || t.nYes+open < t.quorum
}

// collect reads answers until the round is decided.
func (t *tally) collect(ch <-chan result[bool]) {
	for !t.decided() {
		t.add(<-ch)
	}
}

// drain waits for every node still out, so that nothing it might still write
// races a rollback. Each answer is bounded by the node timeout.
func (t *tally) drain(ch <-chan result[bool]) {
	for t.nWaited < len(t.votes) {
		t.add(<-ch)
	}
}

// finish frees the (key, value) slot once every node of the round answered.
// A round decided early replies at once, but its stragglers keep the slot in
// the background, so no later round of the same owner overlaps them.
func (t *tally) finish(ch <-chan result[bool], unlock func()) {
	if t.nWaited == len(t.votes) {
		unlock()
		return
	}
	go func() {
		t.drain(ch)
		unlock()
	}()
}

// failure is the reason a round that did not reach quorum failed: a quorum of
// definite "no" answers is a normal negative (taken / not held), anything
// else means the service could not decide.
func (t *tally) failure(negative error) error {
	if t.nNo > len(t.votes)-t.quorum {
		return negative
	}
	return ErrNoQuorum
}

// maybeWrote lists the nodes where the round's write may have landed.
func (t *tally) maybeWrote() []int {
	var idx []int
	for i, v := range t.votes {
		if v == yes || v == failed {
			idx = append(idx, i)
		}
	}
	return idx
}

// roundError describes a failed round; negative names what a "no" means per node.
func (t *tally) roundError(op string, reason error, nodes []Node, negative string) *RoundError {
	var errs *multierror.Error
	for i, v := range t.votes {
		switch v {
		case no:
			errs = multierror.Append(errs, &NodeError{Addr: nodes[i].Addr(), Err: errString(negative)})
		case failed:
			errs = multierror.Append(errs, &NodeError{Addr: nodes[i].Addr(), Err: t.errs[i]})
		case pending:
			errs = multierror.Append(errs, &NodeError{Addr: nodes[i].Addr(), Err: errString("no answer yet")})
		}
	}
	if errs != nil {
		errs.ErrorFormat = oneLine
	}
	return &RoundError{Op: op, Reason: reason, Votes: t.nYes, Nodes: len(t.votes), Quorum: t.quorum, NodeErrs: errs}
}

// errString is a plain per-node reason such as "taken".
type errString string

func (e errString) Error() string { return string(e) }
