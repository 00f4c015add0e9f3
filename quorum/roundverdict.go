package quorum

import "github.com/hashicorp/go-multierror"

// A failed round's verdict and its error: what a "no" means, which answers
// may decide a negative, and what each node said.

// failure is the reason a round that did not reach quorum failed: a quorum of
// definite "no" answers is a normal negative (taken / not held), anything
// else means the service could not decide.
func (t *round) failure(kind RoundKind) error {
	if t.trustedNo(kind) > len(t.votes)-t.quorum {
		return kind.negative()
	}
	return ErrNoQuorum
}

// trustedNo counts the "no" answers that may decide a negative verdict. For
// an extend, a node in restart quarantine lost its keys: its "absent" does
// not show that the caller is not the holder, so it is not counted (the
// caller hears NOQUORUM rather than "not held" while a restart thinned its
// copies). For an acquire, a "no" from such a node is a holder written
// since the restart, and counts.
func (t *round) trustedNo(kind RoundKind) int {
	if kind != RoundExtend || t.e == nil {
		return t.nNo
	}
	n := 0
	for i, v := range t.votes {
		if v == no && !t.hopeless[i] && t.counts(i) {
			n++
		}
	}
	return n
}

// roundError describes a failed round of kind, which says what a "no" means per node.
func (t *round) roundError(kind RoundKind, reason error) *RoundError {
	negative := roundKinds[kind].no
	var errs *multierror.Error
	for i, v := range t.votes {
		switch v {
		case no:
			if kind == RoundExtend && t.e != nil && (t.hopeless[i] || !t.counts(i)) {
				// Its "absent" did not count (trustedNo): say why.
				errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: t.quarantineWhy(i)})
				continue
			}
			errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: errString(negative)})
		case failed, skipped:
			errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: t.errs[i]})
		case quarantined:
			errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: t.quarantineWhy(i)})
		case pending:
			if t.hopeless != nil && t.hopeless[i] {
				// Could never count, so the round did not wait for it: the
				// quarantine is the cause, not the wait.
				errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: t.quarantineWhy(i)})
				continue
			}
			errs = multierror.Append(errs, &NodeError{Addr: t.addr(i), Err: errString("not waited for: the round was decided without it")})
		}
	}
	if errs != nil {
		errs.ErrorFormat = oneLine
	}
	return &RoundError{Op: kind, Reason: reason, Votes: t.nYes, Nodes: len(t.votes), Quorum: t.quorum, NodeErrs: errs}
}

// quarantineWhy says why node i's "yes" could not count.
func (t *round) quarantineWhy(i int) error {
	if t.e != nil {
		return t.why(i)
	}
	return &QuarantineError{Why: "quarantined: it may have lost locks"}
}
