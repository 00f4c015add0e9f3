package e2e

import (
	"os"
	"strings"
	"testing"
)

// SAFETY.md, written from the fault suite's rows.

func writeSafetyReport(t *testing.T, rows []string) {
	report := `# Safety under faults

Written by ` + "`go test -run TestFaultSuite ./e2e`" + ` (part of ` + "`bash .ci/run`" + `). Five real redis-servers,
each behind a toxiproxy link; two proxy replicas (one in the test process, one a separate process);
30 clients contending through both replicas on 4 keys with TTLs from 200 ms to 2 s, for 4 s per scenario.
Every acquire send and reply and every release send is recorded on one monotonic clock. A client's hold
is [its OK reply, min(its release send, its acquire send + PX)]; the checker reports any two owners of one
key whose holds intersect, and counts every OK that arrived after the window it granted had ended (late OKs). After each scenario the backends are audited for keys without a TTL, and again
once every TTL has run out, for leaked keys. Availability counts definite answers (OK or nil) among attempts.
Every row's whole history (each acquire with its invoke and return times, owner, outcome and token, each
release send, each LOCK.TOKEN read) is also checked by internal/history's Check against the contract of a lock
with fencing: no two owners inside their windows, lock-delays kept, one token per lock and tokens only going
up, extend, release and token answers that agree with the owner (see internal/history/doc.go); an Unknown
outcome (NOQUORUM, an error) may or may not have taken effect. "history check" gives the ops checked and the
anomalies found. A row whose history breaks the contract fails and leaves it in $REDLOCK_HISTORY_DIR (else
the system's temporary directory) as redlock-history-ROW.jsonl with an HTML timeline; replay it with
` + "`go run ./cmd/histcheck FILE`" + `. The two out-of-model rows only report theirs.

| scenario | quarantine | attempts | OK | taken (nil) | NOQUORUM | availability | overlaps | late OKs | keys without TTL | leaked keys | p99 acquire | history check | claim | verdict |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
` + strings.Join(rows, "\n") + `

The model (see README, Semantics): independent backends, clock rates within drift_factor, no backend
counting toward a quorum after losing keys (restart quarantine), clients that stop using a lock when its
window ends. Two rows step outside it on purpose. "Quarantine off": the checker must see the overlap it
allows, which shows the checker can fail. "Clock jump": two quorums of 3 out of 5 may share one backend,
and if that backend's clock jumps, its keys expire early and a second owner can win the other three; this
is Redlock's known limit (Kleppmann's critique), which no quorum of this shape survives, and the row reports
what it costs. A clock running fast within drift_factor is inside the model and absorbed by the TTL padding.

The last five rows replay, under the same load, the ways an outside review broke mutual exclusion before
they were fixed (e2e/exclusion_test.go and e2e/restarts_test.go have a focused test for each, which failed on the code before the fix):
a rollback that deleted a same-value retry's lock through another replica; OKs written after their window
behind a slow pipeline neighbour; a replica with a shorter max_ttl ending a restarted backend's quarantine
too early; Redisson hold counts that diverged across two minority outages and released a lock still held;
fencing tokens that went backwards after a restart (with SET NX PX locks whose token LOCK.TOKEN fixes at
their first read on the same sequence). Their owners' holds go through the same checker, and
any wrong answer (an unlock answer one Redis would not give, a token not larger than the last) fails the row.

The sessions row covers the lock service's own features (e2e/safety_sessions_test.go). Owners on replica 1 take one
key with "LOCK.ACQUIRE ... WAIT 1000 SESSION" and hold it up to 2.5 s, past its 1.5 s TTL: their hold is
[reply, release], so only the session renewals keep it theirs; an owner on replica 2 contends with plain
LOCK.ACQUIRE; a backend restarts empty meanwhile. Then a session lock taken through replica 2 is left there
while replica 2 is paused (SIGSTOP) past its TTL: its holder, unaware, counts its TTL from its send; nobody
may take it sooner than native_lock_delay (1 s here) after the pause began, and once replica 2 resumes the
lock must stay its new owner's (a lost session is never renewed). Fencing tokens must increase throughout, and
a session lock held on a live replica must never be found lost at its release.

Five rows answer the third outside review (issue 23); each failed on the code before its fix (c1414d4),
shown by running the row there. "Session lock held while a backend restarts" (e2e/safety_restore_test.go):
the renewals must put the lock back on the restarted backend once its quarantine ends (before: never
restored, so one more fault would end it). "Bootstrap after a restart" (e2e/safety_bootstrap_test.go):
"redlock-proxy bootstrap" must refuse a marked deployment, and a marker naming the restarted backend's new
run must end no replica's quarantine (before: the marker ended it and a second owner won 2.3 s inside the
first one's window). "A hostile client rewrites the bookkeeping" (e2e/safety_review3_test.go): GET, DEL,
SET, EVAL, UNLINK, EXISTS, PTTL, LOCK.ACQUIRE, REDLOCK FORCEUNLOCK and PUBLISH aimed at "__redlock:" keys
and channels through both replicas must each be refused with NOPERM, while a plain lock's first LOCK.TOKEN is
read by four readers at once through both replicas: all must get one token, larger than the last lock's
(before: every attack accepted, tokens reset to 1, and one lock answered [1 2 2 2]). "A queued waiter ..."
(e2e/safety_waiters_test.go): behind a ghost waiter that sent a stray byte and hung up, a live waiter must be
granted next and within 4 s of the release while SET NX PX and LOCK.ACQUIRE without WAIT are sent through both
replicas all along (before: overtakers took the key, and the live waiter waited 6.1 s behind the ghost's
grant and lock-delay).

The last row is a total wipe (e2e/safety_wipe_test.go; focused test TestTokensIncreaseAcrossATotalWipe, which
failed on the code before the fix with tokens starting again from the bottom): every backend is killed at once and
restarted empty while the load's owners hold locks, and nobody runs a bootstrap. Both replicas must refuse until
the quarantine window has passed since the backends started (no overlap), and LOCK.ACQUIRE's tokens through both
replicas after the wipe must be larger than every token before it: the counters are re-seeded from the clock
(quorum/doc.go, "Fencing tokens after a total wipe").
Jumping clocks are emulated by cutting one backend's TTLs; the nemesis below runs backends' clocks at a skewed rate.

## Model-checked, and randomized

**Model** (model/, run by ` + "`.ci/run`" + `'s "model check" stage): model/mutex.pml is a Promela model of
string-lock mutual exclusion: one key, 3 backends (Q = 2), 2 replicas, 2 clients whose retries reuse their
value, each backend script one atomic step, every request landing in time, late or never, abstract time with
TTL padding and (WITH_DRIFT) nodes dropping keys a tick early. spin checks it exhaustively: 1,291,898 states
(depth 199, MAXT=4) and, with drift, 3,386,467 states (MAXT=3), 0 errors. Mutants the test shows caught: no
TTL padding, no restart quarantine, no round-id check in the rollback (bitstate), a bootstrap marker that ends a
restarted node's quarantine (bitstate; the third review's finding, issue 23), a release that deletes a lock-delay's note
at once. Not verified yet (in the model but too slow to finish, or not modelled): restart with a quarantine that
ends (a partial bitstate search with bootstrap: 0 errors), extend beside a release, Redisson's hash-lock release. model/README.md has the bounds and the mapping of each model step to the code's functions.

model/sessions.pml models a session lock after its grant: its replica's renewals (naming the grant's round,
restoring it on a backend that lost it), the holder's connection closing at any moment, however late the replica
notices (the replica leaves the lock to its TTL, as a graceful shutdown does, or releases it naming its round), the
holder re-attaching it through the other replica with a longer TTL (a new round) and that replica's renewals, an
extend from another connection of the holder (it keeps the lock's round, never shortens a session's lock, and pins
its promise: the release at close and the acquire's rollback leave a pinned lock to its TTL), and another client's
acquire with its rollback; the first replica's requests land in time, late or never. Checked exhaustively in CI, in
three runs (the whole at once did not finish in 10 minutes): 2,943,242 states without the extend, 1,261,046 with
the extend and no re-attach, 3,015,388 with both (the re-attach without renewals), 40,714 for a failed acquire's
rollback beside a pin; 0 errors (MAXT=4). Mutants caught: a release at close, a renewal or a re-attach that ignores
the round; a release or a rollback that ignores the pin; an extend that shortens a session's lock.

model/tokens.pml models fencing tokens: 3 backends, 2 replicas, two racing fenced grants (acquire's INCR, the
token the largest counter among the granting intact nodes, the raise and its outbid, the first raise's token
tentative until the grant's last raise makes its token final), a plain lock's first LOCK.TOKEN read (fixToken's
two rounds, set if absent), a backend restarting empty with its quarantine and the repair that raises its
counter, another key's grant bumping the shared counter. Invariants: a lock's first token is above every token
answered before it, and every later answer for the same lock is the same token. Exhaustive: 5,259,461 /
5,968,639 / 135,563 / 4,146,746 / 1,604,438 states in its five CI runs, 0 errors; mutants caught: a token from
one node's INCR, a repair that marks a node intact without raising its counter, a read that takes a tentative
token, a first raise that notes its token final. Its SCEN_READ run (two racing grants and a reader, outside CI:
44,920,367 states, 200 s) found a reader between an outbid grant's two raises answered the first raise's token; with tentative
tokens it verifies (model/README.md).

model/queue.pml models the fair queue: a holder and two waiters on 3 backends (tail, add, beats, dequeue, the fair
acquire that only the queue's head may make, leases lapsing, a backend restarting empty). Invariants: mutual
exclusion with the lock-delay, and no waiter granted ahead of one queued before it that is still live on a quorum.
Exhaustive: 3,962,178 and 8,037,425 (with a restart) states, 0 errors; mutants caught: an acquire that ignores the
queue's head, a purge by ticket instead of by lease. Its first version found a waiter that re-queued after its
lease lapsed kept its old ticket where its place survived (fixed: it leaves its old place first).

**Nemesis** (` + "`go run ./e2e/nemesis -seed N -for D`" + `; README, "Nemesis"): real redis-servers and proxy replicas as
processes, toxiproxy links, clients of every kind (SET NX PX with the canonical unlock and extend scripts,
Redisson hash-lock scripts, LOCK.ACQUIRE with WAIT and SESSION, LOCK.EXTEND/TOKEN/RELEASE, impatient retries
through the other replica, concurrent first LOCK.TOKEN reads, and with -hostile commands aimed at the
bookkeeping keys), under a seeded schedule of backend pauses, kill -9 and restarts empty, link stalls and
drops, replica pauses, kills and restarts. Every operation goes into one history checked by internal/history.
` + "`.ci/run`" + ` runs seed 24 for 75 s (TestNemesisShortSchedule). Soaks on this 2-core machine: 10 min (seed 2411,
376 faults, 17,479 ops) and 10 min hostile (seed 2412, 362 faults, 17,523 ops): no two owners, no token out of
order, every hostile command refused; seed 2412 found one wrong answer (a holder's release after a backend
restart answered "not held"), now answered NOQUORUM (quorum.TestReleaseAfterRestartIsNotNotHeld). A 30-minute hostile soak
(seed 3001, 16 clients, 1,100 faults, 98,292 ops, 11,753 holds, 61,413 bookkeeping commands all refused)
found no two owners and no token out of order, and one more wrong answer of the same kind (LOCK.TOKEN nil to a
holder whose copies a restart thinned), now NOQUORUM too (quorum.TestReadAfterRestartIsNotAbsent).
On the code before the third review's fixes (c1414d4), seed 3 finds "one lock, two tokens" in 60 s, and with
-hostile tokens going backwards. Clock-rate skew is injected: a backend restarts with its clocks 0.8% slow to 0.8%
fast (within drift_factor 0.01) through e2e/nemesis/testdata/skewclock.c, a preload library of ours built with
gcc (Debian's libfaketime hangs Debian's redis-server, which links jemalloc); seed 24 runs it 5 times. A
30-minute hostile soak with clock skew (seed 3801, 16 clients, 468 faults of which 69 clock-skew, 103,645
operations, 12,180 holds, 61,492 bookkeeping commands all refused) checked linear: no two owners, no token out
of order, no wrong answer. A 30-minute hostile soak (seed 3901, 12 clients, 1,035 faults, 58,550 ops) found one
lock-delay broken: a release that answered "not held" had still deleted the lock's delay note where an
unanswered extend kept the key (e2e TestNotHeldReleaseEndsLockDelay, e2e/nemesis/testdata/fixed; model/mutex.pml
SCEN_DELAY, its mutant mutant_one_step_release). A release now keeps such a note, marked, until a quorum deleted
the lock; the same seed for 30 minutes on the fix (1,035 faults of which 134 clock-skew, 59,610 operations, 10,935
holds, 63,996 bookkeeping commands all refused) checked linear. Since 70252c8 every kind runs with a lock-delay
(lock_delay 500 ms, native_lock_delay 1 s) that the checker holds it to: seed 24 against b8efe89's binary finds 7
lock-delay anomalies (Redisson locks taken 125-328 ms after another's expired unreleased: hash locks had no
lock-delay then); on 79812d6 (before 0ca3e42 fixed the earlier review's findings) seed 3 for 150 s finds two Redisson owners 274 ms
at once. A 30-minute hostile soak on 449fcfd (seed 4401, 16 clients, 1,043 faults of which 157 clock-skew,
107,285 operations, 12,064 holds, 63,564 bookkeeping commands all refused) checked linear.
`
	if err := os.WriteFile("SAFETY.md", []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
}
