// Package quorum is the Redlock engine: it turns one lock operation into a
// round sent in parallel to N independent Redis masters and decides it by a
// majority, Q = N/2 + 1. It knows nothing about RESP or client connections.
//
// A round fans out to every node at once, each call bounded by a per-node
// timeout, and decides as soon as Q nodes agreed or Q can no longer be
// reached; nodes still out finish in the background. Acquire and Extend write
// the TTL padded for clock drift, ceil(t/(1-drift_factor)) + 2ms. Rounds for
// the same (key, value) never overlap inside one Engine.
//
// The safety argument assumes what Redlock assumes:
//   - the nodes fail independently and share no replication;
//   - clock rates differ by at most the drift factor, and clocks do not jump;
//   - at any moment fewer than Q nodes are faulty, counting as faulty a node
//     that is down, paused, or restarted empty and not yet out of quarantine;
//   - a client stops using a lock when its window ends, which a process
//     pause after the reply can break: fencing tokens exist for that.
//
// The engine holds no lock state itself; any number of engines, in any
// number of processes, can share one set of nodes. The invariants below are
// what makes that safe; each names the test that holds it to account.
//
// # Validity: which clock, from when
//
// A caller's window opens when its request arrived (WithArrival: the moment
// the proxy read the command off the client's socket), not when the round
// started: time queued behind a pipeline neighbour or behind the same
// owner's previous round counts against it. Validity is measured on the
// monotonic clock of the engine's process from that moment. A round that
// finds the window already spent before sending sends nothing. A grant
// needs Q votes and more than min_validity left at the decision; the
// caller of the engine checks Grant.ReplyBy again immediately before
// writing the reply, and revokes the grant (Grant.Revoke) if it passed.
//
// # What a rollback may delete
//
// Every acquire round has an id unique across engines; each node that sets
// the lock notes the id (and the TTL's padding) beside it, under MetaKey. A
// rollback, of a failed round or of a revoked grant, deletes the key only
// where it still holds the value AND the note names this round: never what
// a retry of the same value wrote through another replica, never a later
// round's write. It waits for the round's stragglers first, and completes on
// a context of its own before the failure is answered.
//
// The id of a connection-bound lock's round (AcquireBound) ends with
// BoundMark; Read reads the notes, so every replica tells such a lock
// (Entry.Bound) from the round its holders carry.
//
// A force release (DEL) deletes whoever holds the lock, so it has no round
// of its own to compare: it reads each node's print of the key first and
// deletes only what still prints so (forcerelease.go); a late copy never
// deletes a grant made after it was answered.
//
// # Extend
//
// An extend succeeds on a node only while the holder's window is open
// there: the key holds the value and its PTTL is above the padding its note
// records (below it the padded key outlives a window that one Redis would
// already have ended). Extends are not rolled back: a lock extended on a
// minority only delays other owners until its TTL.
//
// No extend, renewal or re-attach shortens the TTL of a lock a session
// renews (its round carries BoundMark or SessionMark), and an extend keeps
// the lock's round: it never moves a session lock out of the session
// that renews it, so an extend that fails or lapses takes nothing from the
// holder. An extend from outside the session (Extend, not ExtendRound)
// pins its promise beside the lock (PinKey, for the TTL it answered for);
// the release at the session's close (ReleaseRound) and an acquire's
// rollback delete nothing a live pin names (the close strips the session's
// mark from such a lock's round: a timed lock from then on), and every
// other release deletes the pin with the lock. Overwrite (SET XX) with the
// holder's value keeps the round and pins too; with another value it
// deletes the pin (TestExtendPinAgainstRedis, TestOverwritePinAgainstRedis,
// TestReview31ExtendedBoundLockKeepsItsWindow,
// TestReview3xFailedExtendKeepsTheSession, TestReview37*).
//
// Racing re-attaches of one holder leave every backend naming the latest,
// and that one booked: see Reattach and reattachRound (reattach.go).
//
// # Quarantine
//
// A node that restarted empty, or that was first seen younger than the
// window, does not count toward an acquire or extend quorum until the
// window has passed since it started. The window is the longest padded TTL
// any engine sharing the nodes may grant, plus its longer lock-delay: each
// engine writes its own into a record on every node before that node may
// vote for it (MaxTTLKey), and every engine takes the largest record it reads.
// After a restart, a node counts only once N-Q+1 of the other nodes were
// read since: any N-Q+1 of them share a node with every quorum the
// restarted one belonged to, so the window includes the record of every
// engine that granted on it. A node that fsyncs every write keeps its
// locks and records across a restart and is not quarantined by an engine
// that saw the restart; one first seen started within the window without
// its run's marker waits the window from its start (it may have been
// restored from an older copy, review110).
//
// Deployment markers (IntactKey) name the run_id they were written on and
// an id of the marking (NewMarker), and are written only on a node that
// votes (or by Bootstrap), never over a marker of the same run. A node whose marker names its
// current run has been up without a break since it was marked, so it holds
// every lock granted since: it counts whatever its age. A node without such
// a marker may have lost its state (restarted, replaced by an empty
// server, flushed, even all at once): it waits the window from first
// sight, whatever its uptime (a new deployment is marked by Bootstrap). A node whose marker this engine knew, gone, or (of
// its current run) another, under the same run_id, was flushed (or its
// keys deleted, and then marked again by some replica): it waits the
// window from that sight, whatever its persistence; so does a node that
// fsyncs every write and comes back from a restart without the marker it
// had, or carries none at first sight (health.observe, quarantine;
// review105, review106, review108). Each engine also sets its own presence
// (EngineKey) to a rising number at every check and reads in the same
// script the one it replaces: the last it wrote there gone or older (a
// restore from a copy), on this run or on any run of a node that fsyncs
// every write, is a flush (health.present; review107, review108). Only this engine writes it, so no repair, stale read or other
// engine's marking can hide that loss, as they can a marker's. Only checks begun
// after this engine's last repair of the node judge its marker, and a
// repair marks a node only where its marker still reads as last seen
// (repair.lua), so a flush between the check and the repair is seen by
// the next check. The flush is seen at the next health check. With no
// markers anywhere the uptime rule applies.
//
// A quarantine an engine started ends only by that engine's clock
// (TestQuarantineEndsOnlyByOwnClock; e2e
// TestBootstrapNeverEndsAnotherReplicasQuarantine): a marker that appears
// later on a node it saw restart, or saw young, proves nothing to it, as it
// cannot tell who wrote the marker or whether the writer saw the restart.
// Only at first sight does a marker of the node's current run exempt it;
// engines write one only on a node that counts for them, so after its
// window from their own sight of its start. Two configured nodes reporting
// one run_id are one server: the second is never sent an op, never votes.
//
// # Bootstrap
//
// Bootstrapping a new deployment is a deliberate one-time act (Bootstrap,
// the subcommand redlock-proxy bootstrap), never a setting left on. It
// marks every node, with its token counter seeded (below), only if every
// node answers, is a distinct server, carries no marker (a deployment
// marked once is never bootstrapped again, so an unmarked node among
// marked ones is always a restarted one), carries no max-TTL record (every
// engine writes one on each run of a node before that node votes for it:
// a record means an engine has seen this run and may have granted on it)
// and is younger than the window; each node is marked by one script that
// checks marker and record again, so an engine that meets a node between
// the check and the mark makes the mark refuse. If an engine met a node
// before it was marked, that engine keeps the quarantine it started
// (above). TestBootstrapIsAOneTimeAct; e2e
// TestBootstrapRefusesAfterATotalRestart.
//
// # Lock-delay
//
// A string lock acquired with a lock-delay (Settings.LockDelay,
// NativeLockDelay) keeps its note the delay longer than the key, extends
// included; a node refuses to set a key whose note outlives it, so a lock
// that expired unreleased stays taken for the delay. A rollback deletes
// both. A release cannot tell on one node whether it will delete the lock
// on a quorum: where the note outlives the key it deletes the key and keeps
// the note, marked with the release's id (OpDelIfEq with Mark), and only a
// release that Q nodes answered removes its marks (OpUnmark) before it
// answers, so a released lock is free at once. A release that answers "not
// held" or fails (the lock lived on a minority, kept there by an extend
// whose answer never came, and expired elsewhere) leaves its marks: the
// lock expired unreleased, and its delay holds on every node that held it
// (e2e TestNotHeldReleaseEndsLockDelay; model/mutex.pml SCEN_DELAY). Lost
// and late answers: release.go unmark, unmarkLate; a mark that escapes them
// lives out the lock's TTL and delay (liveness only). A note expires from
// its key's expiry (PXAT), exactly; a lead under 5 ms is none (a delay is 0
// or at least MinLockDelay). Quarantine covers the delay (lost notes).
//
// A hash lock (Redisson's) keeps Settings.LockDelay alike: note "#<delay>";
// ReleaseHash's marks are "!<id>#<delay>", removed only if it deleted the
// lock on Q nodes (a Released where fewer did, N-Q "absent" or Redisson
// 3.10's unlock, ended a lock that expired on a majority: the nodes it
// finishes keep theirs marked too); the id is one per unlock request (its
// latch: releaseMark), so a retry from the latches removes its first
// attempt's marks (e2e lockdelay_hash*_test.go).
//
// # Batched renewal
//
// Renew extends many locks in one operation per node, each lock judged as
// an Extend (Q counting nodes, validity from the caller's arrival). It takes
// no (key, value) slot: it only extends where the holder's window is still
// open, which is safe beside a release or extend of the same lock in either
// order. The proxy renews its connection-bound (SESSION) locks with it.
// Its scripts (128 locks each) go out in the caller's order, each waiting
// as long as its own locks' shortest TTL allows. QueueBeats renews many
// waiters' places in a fair queue the same way (one script per 128).
//
// A renewal also restores the lock on a node that lost it (restarted empty,
// or paused past its TTL), with the same padded TTL, only where both the
// key and its note are absent: never over another owner, never during a
// lock-delay. A restore is like a SET NX of the holder's own lock: it
// takes a free node, which no other owner's grant can then count. It does
// not count toward the renewal that made it, only toward later renewals
// that find the lock held there with its window open. The restore lands
// while the renewal that carries it is out, within the lock's window,
// when a quorum holds it, so no other owner can hold it meanwhile. Not
// covered: a restore that a stalled node runs after its round's deadline
// and past the lock's window, then counted by a later renewal; another
// owner could have held that node in between only with a TTL below the
// node timeout, on a quorum excluding every node that kept the lock.
// A release must not race a renewal that could restore what it deleted:
// the proxy releases a session lock only after the renewal round out has
// ended (e2e TestSessionRenewalRestoresALostBackend).
//
// # Waiters first
//
// While a key has a wait queue (Enqueue), a node refuses every acquire but
// a fair one of the queue's head as if the lock were held (plain SET NX PX,
// client scripts, Redisson's hash locks; a re-entry excepted), by one
// EXISTS in the acquire script. The queue lives as long as its longest
// lease (e2e TestPlainAcquireDoesNotOvertakeAWaiter). Redisson's fair
// locks queue so in a queue of their own naming (fair.go); no queue is
// ever what keeps two owners apart, only the lock's quorum.
//
// # Fencing tokens
//
// How nodes count tokens, why a grant's token is larger than every earlier
// one of its key, and when a grant needs no raise round ("One round, no
// raise"): fencingdoc.go.
//
// # Fencing tokens after a total wipe
//
// A wipe of every node loses every counter; tokens still increase across
// it, within a stated clock bound: each marking seeds the shared counter,
// and every lock counter the node lists, from the wall clock (CounterSeed;
// the argument is bootstrap.go's).
// TestWipedDeploymentIsSeededFromTheClock; e2e
// TestTokensIncreaseAcrossATotalWipe.
//
// # Reentrant hold counts
//
// A node that missed a round keeps a stale hold count. Every successful
// reentrant acquire levels the granting nodes to the largest count reported
// and needs Q nodes at that count; a release judges by the largest count any
// voting node had before it, so a quorum never holds fewer holds than the
// owner was told, and a lock is never released while the owner still holds
// it. The cost is liveness, never safety: a node that missed a release is
// one hold ahead, so the owner's last unlock answers "still held" and the
// lock expires with its lease instead of at that unlock. A retried unlock
// (the client's latch key again) reads the first attempt's answer from the
// latches where it ran; where it runs fresh beside latches saying "still
// held", it sets the nodes it finds behind to the holds the latches report
// and answers still held on a quorum, else NOQUORUM (hashretry.go;
// review115-118).
//
// # Read-write locks
//
// AcquireRW: readers share a lock, a writer holds it alone (but for its
// own thread's reads). Two grants' quorums share a node, which granted the
// later one only once the earlier's hold had ended there: each holder's
// hold ends at its own time (HoldersKey), at least its padded TTL. Holds
// are levelled, rolled back and released as reentrant ones (above); a
// holder that expired unreleased keeps its lock-delay on the nodes that
// saw it (RW.pending). Not in model/*.pml; e2e
// TestRWLockNeverAWriterBesideAnother, the nemesis's rwlock clients.
//
// # Semaphores
//
// A semaphore of p permits (AcquirePermit: Redisson's
// RPermitExpirableSemaphore) is p slots, each a lock; the argument that
// holders never outnumber the slots, and how rollbacks, lease updates and
// the number of permits keep it, is semaphore.go's.
//
// # Reserved keys
//
// Every key the engine keeps for itself starts with InternalPrefix: the
// deployment markers, the max-TTL record, the fencing counters and their
// set, the notes beside locks, read-write locks' holders, the fair queues,
// the semaphores' slots.
// Only the engine names them: every operation that takes a caller's key
// (Acquire, Release, Read, the hash and queue operations, Renew...)
// refuses one under the prefix with ErrReserved before any node sees it.
// So a marker, record or counter a health check or a fence reads was
// written by an engine, never by a client round, not even on one node for
// the moment before its rollback (TestRoundsRefuseReservedKeys; the proxy
// refuses such names first, with a NOPERM reply).
//
// The keys of a proxy's databases 1-15 are the clients', not the engine's
// (DBPrefix, NamespaceKey).
//
// # Model
//
// model/*.pml model this package, steps named after its functions:
// mutex.pml acquire, release (lock-delay marks), extend, rollback, restart
// quarantine, bootstrap; sessions.pml Renew, ReleaseRound, Reattach;
// tokens.pml fencing; queue.pml the fair queue. model/*_test.go show each
// mutant caught; model/README.md says what is verified, and what is not.
package quorum
