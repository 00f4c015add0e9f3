package quorum

// Fencing tokens: the argument, kept here beside fencing.go rather than in
// the package comment (doc.go, "Fencing tokens", points here; its section
// "Fencing tokens after a total wipe" stays there).
//
// Each node keeps a counter per fenced lock and lists the counters in a set
// (CountersKey): the shared TokenKey for the native locks, and for a hash
// lock whose client names its own counter (Redisson's RFencedLock) a key
// in the engine's names, LockCounterKey, never the key the client named
// (which any client command reaches: a compare-and-delete, a DEL, an
// extend, a latch the client writes there). A node that lacks a lock's
// counter starts it from its TokenKey (nothing a client writes is read),
// so that the counter-lost cases below hold for it as for TokenKey: a
// marking without enough intact nodes to repair from (a majority lost, a
// total wipe, a new deployment: markSeeded, Bootstrap) raises every
// counter the nodes have, the lock counters that tries made while they
// were unmarked included (review114), in the very script that marks each
// node (Node.Repair's floor, MarkNew: one made after the engine read the
// counters too, review115), to at least the clock's seed, above
// every token any counter gave (each grows by one per grant, within the
// seed's rate bound, bootstrap.go), so a lock's counter made again after
// starts above its old tokens too (TestReview111ReseedLowersPerKeyCounter,
// e2e TestTokensIncreaseAcrossATotalWipe); on an intact node the counter
// was never lost, and a node that never held the lock starts wherever it
// does: a token is the largest count among Q intact holders, one of which
// carries the lock's last token. A node is intact when it carries its current run's
// marker: its counters were never lost since it was marked; its answers
// count toward a token only if it was intact when the round was sent, too
// (one repaired meanwhile may have answered from the counter it had lost,
// review104: TestReview104RepairBetweenIncrAndFence). A token starts
// as the largest counter among Q intact nodes that granted; then Q intact
// nodes' counters are raised to it, each reporting its counter from before
// and whether this grant wrote it last (WriterKey). A counter another grant
// left at or above the token means that grant's raise landed after this
// grant's INCR there: the token becomes that counter plus one and the raise
// is repeated, once (what later raises find belongs to later grants). A
// grant's raise runs after it won its quorum, so after every earlier
// grant's raise completed (an earlier grant's lock must be gone on a node of
// this quorum, which happens only after its token was given); any two sets
// of Q share a node, so every token is larger than every one before it
// (TestFencedTokenAboveARaiseThatLandedLate). A token read is the Q-th
// largest counter among intact nodes.
//
// One round, no raise (fence, oneRound: fenced string locks only). Each
// holder's acquire notes the counter it counted up to beside the lock,
// tentative, in the script that set the lock. When Q intact granting
// nodes counted up to the token itself (the largest), the grant answers
// without a raise and confirms its token as after an unoutbid first raise.
// Proof: every answered fenced grant G of a key leaves a set H(G) of Q
// intact nodes on each of which, while G's lock was held there, the
// counter stood at or above G's token T, in the script that noted T beside
// G's lock: in one round, the Q holders that counted up to T; with a
// raise, the Q holders its last raise noted T beside (raise needs
// noted() >= Q, and notes only beside the lock of its round). A later
// grant G2 of the key, answered after G, has Q intact holders; they share
// a node W with H(G). On W, G2's lock was set after G's left (had G2's
// come first, G2's window would have ended before G's began, and G2 been
// answered before G), so G2's INCR on W ran after W's counter reached T,
// and T2, the largest of G2's holders' counters, is above T. A node of
// H(G) that restarted counts for G2 only once repaired: its counter is
// raised to the largest of N-Q+1 intact others, one of which is in H(G).
// So tokens still only go up, whichever way each grant was given; when
// fewer than Q holders counted up to the token (other keys' grants counted
// on some nodes, a failed acquire's INCR landed on some), the raise runs
// as above (model/tokens.pml: tokens_three_seq, and mutant_one_round_any,
// which skips the raise whenever Q intact nodes granted, caught; quorum
// TestFencedGrantInOneRound, TestFencedGrantRaisesWhereItsHoldersCountersDiffer).
//
// Fenced string locks (AcquireFenced, the proxy's LOCK.ACQUIRE) draw their
// tokens from one counter per node for all keys (TokenKey), so that tokens
// cost constant memory; the acquire notes the lock as fenced at once, and
// the raise notes the token beside the lock on the nodes that hold it, and
// needs Q of them. A read answers a token only when Q holders of the lock's
// round note it (TokenOf, Entry.Agreed): one holder may keep a token its
// lock does not (an outbid raise's, where the last raise missed it), and the
// last raise's token on fewer than Q (the acquire failed, or its other
// holders are unreachable) is not proven either; then none is answered. A
// renewal's restore notes the token the renewal's holders agreed on (else
// "none yet", which yields to the others' tokens). A re-attach moves a lock
// only once Q holders note one token, and only those holders (Reattach).
// The acquire notes its own counter tentative and the first raise its
// token tentative, and a tentative token is no token to a read. A grant that was not outbid confirms it final once it
// passed its validity check (confirm: unawaited, before it answers, resent
// where it failed); an outbid grant's second raise notes its larger token
// final. A grant's last raise is one token, and a node makes final only
// the token its note has none of, holds tentative, or holds already: no
// node ever notes another token final for that lock. A tentative token
// counts beside the same token final on another holder of the round (the
// first raise's token was then the last raise's: confirmed), so a
// confirmation lost on a few holders costs nothing. So a token read on Q
// holders is the one a grant's last raise made final: never an outbid
// first raise's (a reader between the two raises waits, readNoted, and
// answers the grant's), nor the first token of a grant that failed between
// its raises (it may be below an earlier grant's: that is why it was
// outbid). No clock is involved. A session lock's renewals carry the token
// its grant answered (Lease.Granted): they confirm it where a holder notes
// it tentative, and a restore whose holders did not agree notes it. A
// confirmation lost on every holder (resent twice where it failed) of a
// lock no session renews leaves it without a readable token (its holder
// has it from the grant), never with another one (model/tokens.pml,
// SCEN_READ_BUMP and SCEN_READ; e2e tentative_test.go,
// tentative_confirm_test.go).
//
// A lock taken without a token (Acquire) gets one at its first TokenOf,
// and one lock has exactly one token however many readers, on however
// many engines, read it first at once (tokenfix.go). The backends decide:
// a reader proposes a token (one more than the largest counter among Q
// intact nodes, or the token some holders fixed already), and each node
// raises its counter to it and fixes it beside the lock only if none is
// fixed there (set if absent; a node's fixed token never changes while the
// lock lives), answering the token fixed there. A token is the lock's once
// Q holders fixed it: two sets of Q share a node, so at most one token
// ever is. A reader answers that token, drawn by it or another, only if it
// saw Q holders fix it before the lock can expire on one of its holders,
// and otherwise refuses (ErrNoQuorum, ErrValiditySpent); a later read
// answers a fixed token only once Q holders agree on it, and only if it
// saw them before the lock can expire on one of them, as a fixer must. Each of those holders had
// its counter raised to the token in the script that fixed it, and a later
// owner is granted only after that moment on a quorum that shares one of
// them, so its token is larger (TestFirstTokenSplitAnswersTheQuorumsToken;
// e2e TestFirstTokenReadsAgreeAcrossReplicas).
//
// A node without the mark (it restarted empty, or is new) is repaired:
// each counter is raised to the largest value among N-Q+1 intact other
// nodes, and only then marked. With fewer intact nodes (a majority
// restarted or was flushed), the unmarked nodes that vote are marked with
// every counter raised to the largest any answering node has and to the
// clock's seed (markSeeded): those that lost counters vote only
// a window after the loss, as the wipe argument below needs; those that kept
// them carry every token a quorum of theirs gave (review110). A node is
// marked only after this engine's check tested its presence on the node's
// current run. When no node at all is marked
// and a quorum answers, every one of them counting (out of quarantine by
// the uptime rule), the deployment is new or was wiped whole: the nodes are
// marked with their shared counter seeded, as Bootstrap does.
