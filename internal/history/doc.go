// Package history is the record of what clients saw: every lock operation a
// test or the nemesis sent, with the times it was sent and answered on the
// recording process's monotonic clock, and what it was told. The fault suite
// and the nemesis (e2e/nemesis) write histories; Check reads a whole history
// and reports every anomaly against the contract of a lock with fencing
// (DESIGN.md), so an anomaly nobody wrote an assertion for still fails.
//
// # What Check judges
//
// Per key, an owner's window is certain from the Return of the OK that
// granted (or extended) its lock to the earliest moment it may have ended:
// Invoke+TTL of that op (the proxy counts the TTL from when it read the
// request, which is after Invoke), cut at the Invoke of any later release of
// the owner that may have taken effect (OK or Unknown) and at Invoke+TTL of
// any later extend that may have (an extend may shorten a lock). An op with
// no TTL (a session lock) holds until its release. Then:
//
//   - overlap: two owners' windows intersect, unless both are Shared (a
//     read-write lock's readers share it; a writer shares it with no one);
//   - late: an OK returned after the window it granted had ended (unless
//     Options.AllowLate: a replica paused with a request in its socket);
//   - lock-delay: an owner granted (sent after the earlier grant returned)
//     and answered before the earlier lock's last window end plus its Delay,
//     when the earlier lock was granted OK, its owner sent no release and no
//     new acquire meanwhile, and not both are Shared;
//   - two-tokens: one lock (an owner's acquire and its later ops up to its next
//     acquire) answered two different tokens (its grant's and LOCK.TOKEN's);
//   - token-backwards: a lock granted after another's grant returned, its
//     token fixed after the other's was, has a token not above the other's;
//   - release/extend/token-not-owner: an OK while another owner's window
//     covered the whole request; -never-granted: an OK to an owner that never
//     sent an acquire; -after-release: an extend or token OK after the owner
//     was told its release succeeded; -refused-holder: "not held" to an owner
//     whose own window covered the whole request.
//
// An Unknown outcome may or may not have taken effect, so it never opens a
// window (an Unknown acquire does start a lock its owner's later OKs may
// prove), and it always may have ended one. Only what holds for every
// possible effect of the Unknowns, and every point in [Invoke, Return] at
// which each op took effect, is reported: timing uncertainty and lost
// replies never raise a false alarm (TestLongLegalHistory, FuzzCheck).
//
// # Why not porcupine
//
// porcupine checks linearizability: a sequential model steps from state to
// state on each op's input and output, at one point inside its interval. A
// lock with a TTL changes state with no op at all (it expires), and what the
// contract promises depends on wall time: the holder's window ends at
// Invoke+TTL by the client's clock, the backends keep the key longer (the
// TTL is padded for drift), and a lock-delay runs from an expiry nobody
// observes. porcupine's Step sees no time, so a model would either treat
// expiry as exact (a Taken answer just after a window ends, legal because of
// the padding, would be a false alarm) or never (an overlap after a TTL
// would be missed). Check therefore reasons about intervals directly, and a
// failing history is saved for replay as JSON lines (Write; replay with
// `go run ./cmd/histcheck FILE`) with a self-contained HTML timeline
// (WriteHTML, Save).
package history
