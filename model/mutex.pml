/*
 * mutex.pml: mutual exclusion and lock-delay of redlock-proxy's string locks
 * (quorum/acquire.go, round.go, release.go, health.go, bootstrap.go and
 * backend/scripts/acquire.lua, undo.lua, delifeq.lua, unmark.lua,
 * pexpireifeq.lua, marknew.lua). README.md maps each step to the code; model_test.go runs it.
 *
 * One key, NB = 3 backends (Q = 2), NR = 2 proxy replicas, clients 1 and 2
 * (a client's lock value is its id, so a client's retry reuses its value).
 * Every operation a client sends through any replica is a process of its own
 * (at most MAXOPS in a run): a client may retry through the other replica
 * while its first round is still out, as a client that timed out does.
 * Inside one replica, rounds of the same (key, value) never overlap
 * (keylocks.go): slot[].
 *
 * Time is abstract: a global clock `now` in ticks 0..MAXT. A key written at
 * tick w with the padded TTL TTLP = TTL + PAD expires at w + TTLP; drift lets
 * a node drop a key or note one tick early. A client's window is
 * [arrival, arrival + TTL) and opens at its OK (DESIGN.md's contract).
 *
 * Each backend script is one atomic step (Redis runs a script to its end).
 * A request to a node lands at any later moment (before or after its round's
 * verdict), or is lost; a request sent to a run of the node that has since
 * restarted fails (its connection broke).
 */

#define NB 3
#define Q 2
#define NR 2
#define TTL 2
#ifdef MUTANT_NO_PADDING
#define PAD 0
#else
#define PAD 1
#endif
#define TTLP (TTL + PAD)
#ifndef DELAY
#define DELAY 0 /* the lock-delay in ticks (Settings.LockDelay) */
#endif
#ifdef MUTANT_NO_DELAY_NOTE
#define NOTELIFE 0 /* the note dies with its key: no lock-delay */
#else
#define NOTELIFE DELAY
#endif
#ifdef MUTANT_WINDOW_NO_DELAY
#define WIN TTLP /* quarantine window without the lock-delay */
#else
#define WIN (TTLP + DELAY) /* Engine.ownWindow: padded max TTL + lock-delay */
#endif
#ifndef MAXT
#define MAXT 5
#endif
#ifndef MAXRESTART
#define MAXRESTART 1 /* fewer than Q nodes faulty */
#endif

/* replies (round.go votes) */
#define PEND 0
#define YES 1
#define NO 2
#define FAILED 3 /* lost, late (after the verdict), or not counting */

#define OP_ACQ 1
#define OP_UNDO 2
#define OP_DEL 3
#define OP_EXT 4
#define OP_UNMARK 5
#define MARK(c) (100 + (c)) /* a release's mark (delifeq.lua "!<id>"): one release per client */

/* ---- backends ---- */
byte now;
byte val[NB];  /* the key's value (a client), 0: absent */
byte kexp[NB]; /* the tick it expires at */
byte note[NB]; /* MetaKey: the round that wrote it, 0: absent */
byte nexp[NB]; /* the note's expiry: the key's plus the lock-delay */
byte runid[NB] = 1;
byte mark[NB] = 1; /* IntactKey: the run it was marked on */
bool rec[NB] = true; /* a replica's max-TTL record is on it (written on every observe) */
byte restarts;

/* ---- replicas' health views, index r*NB+n (health.go) ---- */
byte seen[NR * NB] = 1;
byte qend[NR * NB]; /* quarantined until this tick of the replica's clock */
bool slot[NR * 3];  /* keylocks.go: a round of (key, client) runs on replica r */

/* ---- the checker's bookkeeping ---- */
byte hend[3]; /* client c's window ends at hend[c] (exclusive) */
bool rel[3];  /* ... and it released it */
byte nextrid;
bool extended, released; /* an extend, a release answered (SCEN_DELAY's order) */
#ifdef SCEN_DELAY
#define EXT_DONE extended /* the client releases once its extend answered (its requests may still be out) */
#define ACQ_READY(c) (c == 1 || released) /* the contender comes once the release answered */
#else
#define EXT_DONE true
#define ACQ_READY(c) true
#endif

#define V(r, n) ((r) * NB + (n))

#ifdef MUTANT_NO_QUARANTINE
#define counts(r, n) true
#else
#define counts(r, n) (now >= qend[V(r, n)]) /* health.go counts / quarantineLeft */
#endif

inline clearkey(n) { val[n] = 0; kexp[n] = 0; note[n] = 0; nexp[n] = 0 }

/* health.go observe: a new run_id quarantines the node for WIN on this
 * replica's clock, from the moment it is seen; the replica writes its
 * max-TTL record on it. */
inline observe(r, n) {
  if
  :: seen[V(r, n)] != runid[n] -> seen[V(r, n)] = runid[n]; qend[V(r, n)] = now + WIN
  :: else -> skip
  fi;
#ifdef MUTANT_BOOTSTRAP_ENDS_QUARANTINE
  if :: mark[n] == runid[n] -> qend[V(r, n)] = now :: else -> skip fi; /* issue 23 B1 */
#endif
  rec[n] = true
}

/* ---- the environment (env): clock, drift, restarts, health checks, bootstrap ---- */
#define DRIFT(m) \
  :: atomic { val[m] != 0 && kexp[m] == now + 1 -> val[m] = 0; kexp[m] = 0 } \
  :: atomic { note[m] != 0 && nexp[m] == now + 1 -> note[m] = 0; nexp[m] = 0 }
#define RESTART(m) \
  :: atomic { restarts < MAXRESTART -> clearkey(m); mark[m] = 0; rec[m] = false; runid[m]++; restarts++ }
/* monitor.go check: a replica reads a node's INFO when it has news */
#define CHECK(r, m) :: atomic { seen[V(r, m)] != runid[m] -> observe(r, m) }
/* Bootstrap (bootstrap.go, marknew.lua): refused while any node carries a marker */
#ifdef MUTANT_BOOTSTRAP_ENDS_QUARANTINE
#define BOOT(m) :: atomic { mark[m] != runid[m] && !rec[m] -> mark[m] = runid[m] } /* marked ones skipped */
#else
#define BOOT(m) :: atomic { mark[0] == 0 && mark[1] == 0 && mark[2] == 0 && !rec[m] -> mark[m] = runid[m] }
#endif

active proctype env() {
  byte n;
end_env:
  do
  :: atomic { now < MAXT -> now++; /* Tick: keys and notes whose time came expire */
       n = 0;
       do
       :: n < NB ->
          if :: val[n] != 0 && kexp[n] <= now -> val[n] = 0; kexp[n] = 0 :: else -> skip fi;
          if :: note[n] != 0 && nexp[n] <= now -> note[n] = 0; nexp[n] = 0 :: else -> skip fi;
          n++
       :: else -> break
       od; n = 0 }
#ifdef WITH_DRIFT
  DRIFT(0) DRIFT(1) DRIFT(2)
#endif
#ifdef WITH_RESTART
  RESTART(0) RESTART(1) RESTART(2)
  CHECK(0, 0) CHECK(0, 1) CHECK(0, 2) CHECK(1, 0) CHECK(1, 1) CHECK(1, 2)
#endif
#ifdef WITH_BOOTSTRAP
  BOOT(0) BOOT(1) BOOT(2)
#endif
  od
}

/* ---- one operation of client c through replica r ---- */

/* round.go start / send: on a new connection the replica reads the node's
 * identity first (observe); hop: the node could not count when sent */
#define SEND \
  n = 0; \
  do \
  :: n < NB -> observe(r, n); tag[n] = runid[n]; hop[n] = !counts(r, n); n++ \
  :: else -> break \
  od; n = 0

/* what node m does with op (one Lua script, atomic) */
#define EXEC(m) \
  if \
  :: op == OP_ACQ -> /* acquire.lua: SET NX; the note NX (a note left: lock-delay, refused) */ \
     if \
     :: val[m] == 0 && note[m] == 0 -> val[m] = c; kexp[m] = now + TTLP; note[m] = rid; nexp[m] = now + TTLP + NOTELIFE; ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_UNDO -> /* undo.lua: only what this round wrote */ \
     if \
     :: val[m] == c && UNDO_MATCH(m) -> clearkey(m); ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_DEL -> /* delifeq.lua: the key, and its note unless it outlives the key (marked) */ \
     if \
     :: val[m] == c -> DEL_NOTE(m); ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_UNMARK -> /* unmark.lua: the release's own mark */ \
     if \
     :: note[m] == MARK(c) -> note[m] = 0; nexp[m] = 0; ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_EXT -> /* pexpireifeq.lua: only while the holder's window is open there */ \
     if \
     :: val[m] == c && kexp[m] - now > PAD -> kexp[m] = now + TTLP; \
        if :: note[m] != 0 -> nexp[m] = now + TTLP + NOTELIFE :: else -> skip fi; ans = YES \
     :: else -> ans = NO \
     fi \
  fi

#ifdef MUTANT_ONE_STEP_RELEASE
#define DEL_NOTE(m) clearkey(m) /* before: the note went with the key, whatever the release's outcome */
#else
#define DEL_NOTE(m) \
  if \
  :: nexp[m] > kexp[m] -> val[m] = 0; kexp[m] = 0; note[m] = MARK(c) /* kept, marked, with its expiry */ \
  :: else -> clearkey(m) \
  fi
#endif

#ifdef MUTANT_NO_ROLLBACK_ID_CHECK
#define UNDO_MATCH(m) true
#else
#define UNDO_MATCH(m) (note[m] == rid)
#endif

/* round.go collect, one step: each request lands in time (its answer
 * counts; a yes only from a node that counted when sent and counts now,
 * round.go add), or it is late: it lands after the verdict (uncounted), or
 * never (drain). A request to a run that restarted since fails. */
#define INTIME(m) \
  if \
  :: tag[m] == runid[m] -> EXEC(m); \
     if :: ans == YES && (hop[m] || !counts(r, m)) -> rep[m] = FAILED :: else -> rep[m] = ans fi; ans = 0 \
  :: tag[m] != runid[m] -> rep[m] = FAILED \
  :: true -> rep[m] = FAILED; pend[m] = true \
  fi
#define COLLECT INTIME(0); INTIME(1); INTIME(2)

/* a late request lands (the script runs) or is lost */
#define LAND(m) \
  :: atomic { pend[m] -> pend[m] = false; \
       if :: tag[m] == runid[m] -> EXEC(m); ans = 0 :: true -> skip fi }

/* round.go drain: every request still out lands or is lost */
#define DRAIN \
  do \
  LAND(0) LAND(1) LAND(2) \
  :: atomic { !pend[0] && !pend[1] && !pend[2] -> break } \
  od

#define RESETREP rep[0] = 0; rep[1] = 0; rep[2] = 0
#define NYES ((rep[0] == YES -> 1 : 0) + (rep[1] == YES -> 1 : 0) + (rep[2] == YES -> 1 : 0))

/* I1 and I3: when c's OK is written, no other client is inside its window,
 * nor inside the lock-delay after a window it ended without a release */
#define CHECK_GRANT \
  d = 3 - c; \
  assert(hend[d] == 0 || rel[d] && hend[d] <= now || !rel[d] && hend[d] + DELAY <= now)

/* acquire.go Engine.acquire: startTimed, verdict, grant or rollback */
proctype Engine_Acquire(byte r; byte c; byte rid) {
  byte s, n, d, ans;
  byte rep[NB], tag[NB];
  bool pend[NB], hop[NB];
  byte op = OP_ACQ;
end_start: /* SCEN_DELAY's contender may wait for a release that never comes */
  atomic { !slot[V(r, c)] && ACQ_READY(c) -> slot[V(r, c)] = true; s = now; SEND }
  atomic {
    COLLECT;
    if
    :: NYES >= Q && now < s + TTL -> /* verdict: Q counting votes, validity left */
       CHECK_GRANT;
       hend[c] = s + TTL; rel[c] = false;
       RESETREP
    :: else -> op = OP_UNDO
    fi;
    s = 0; d = 0; n = 0; hop[0] = 0; hop[1] = 0; hop[2] = 0 /* dead from here */
  }
  if
  :: op == OP_UNDO -> /* failed: drain, then rollback on every node but those that said no */
     op = OP_ACQ; DRAIN;
     atomic {
       op = OP_UNDO; n = 0;
       do
       :: n < NB -> if :: rep[n] != NO -> pend[n] = true; tag[n] = runid[n] :: else -> skip fi; n++
       :: else -> break
       od; n = 0; RESETREP
     }
     DRAIN
  :: else -> DRAIN /* grant, finish: the stragglers land, the slot is held until then */
  fi;
  slot[V(r, c)] = false
}

/* release.go Engine.release: the client stops using its lock (its window
 * ends now), then compare-and-delete (delifeq.lua). Only a release that
 * answers OK removes its marks (unmark.lua); one that answers "not held"
 * (more than NB - Q counting nodes said absent) did not release: the lock
 * expired unreleased, and its lock-delay must hold (rel stays false). Any
 * other failure (NOQUORUM) may have released it, as the history checker
 * (e2e/nemesis rules.go mayHaveReleased) assumes. */
#define ABSENT(m) (rep[m] == NO && counts(r, m) -> 1 : 0)
proctype Engine_Release(byte r; byte c) {
  byte n, d, ans, rid;
  byte rep[NB], tag[NB];
  bool pend[NB], hop[NB], ok;
  byte op = OP_DEL;
end_wait: /* the client releases a lock it was granted, its window open or over (a late release) */
  atomic { !slot[V(r, c)] && hend[c] != 0 && EXT_DONE -> slot[V(r, c)] = true; hend[c] = (hend[c] > now -> now : hend[c]); SEND; COLLECT;
    ok = NYES >= Q;
    rel[c] = ok || ABSENT(0) + ABSENT(1) + ABSENT(2) <= NB - Q;
    released = true; RESETREP; hop[0] = 0; hop[1] = 0; hop[2] = 0 }
  DRAIN; /* finish: the slot is held until every node answered */
  if
  :: ok -> /* the second step: every node that kept the note marked, in time, late or never */
     atomic {
       op = OP_UNMARK; n = 0;
       do
       :: n < NB -> if :: note[n] == MARK(c) -> pend[n] = true; tag[n] = runid[n] :: else -> skip fi; n++
       :: else -> break
       od; n = 0; ok = false
     }
     DRAIN
  :: else -> skip
  fi;
  slot[V(r, c)] = false
}

/* acquire.go Engine.extend: compare-and-PEXPIRE, no rollback */
proctype Engine_Extend(byte r; byte c) {
  byte s, n, d, ans, rid;
  byte rep[NB], tag[NB];
  bool pend[NB], hop[NB];
  byte op = OP_EXT;
  atomic { !slot[V(r, c)] -> slot[V(r, c)] = true; s = now; SEND }
  atomic {
    COLLECT;
    if
    :: NYES >= Q && now < s + TTL ->
       CHECK_GRANT;
       if :: hend[c] < s + TTL -> hend[c] = s + TTL; rel[c] = false :: else -> skip fi
    :: else -> skip
    fi;
    s = 0; d = 0; RESETREP; hop[0] = 0; hop[1] = 0; hop[2] = 0; extended = true
  }
  DRAIN;
  slot[V(r, c)] = false
}

/* The clients' operations: a scenario per configuration (see README.md).
 * Each operation starts at any moment (its process's first step may wait
 * out any number of ticks and other steps); operations of one (client,
 * replica) wait for each other's slot. */
#define ACQ(r, c) nextrid++; run Engine_Acquire(r, c, nextrid)
#define REL(r, c) run Engine_Release(r, c)
#define EXT(r, c) run Engine_Extend(r, c)

init {
  atomic {
#if defined(SCEN_ROLLBACK)
    /* client 1 retries through replica 1 while its round on replica 0 fails */
    ACQ(0, 1); ACQ(1, 1); ACQ(0, 2)
#elif defined(SCEN_EXTEND)
    ACQ(0, 1); EXT(1, 1); ACQ(1, 2)
#elif defined(SCEN_DELAY)
    /* client 1 extends (the extend may reach a minority), then releases (the release may
     * answer "not held"); client 2 acquires through the other replica */
    ACQ(0, 1); EXT(0, 1); REL(1, 1); ACQ(1, 2)
#elif defined(SCEN_RELEASE)
    /* client 1 releases, then takes the lock again with the same value through the other replica */
    ACQ(0, 1); REL(0, 1); ACQ(1, 1); ACQ(1, 2)
#else
    ACQ(0, 1); ACQ(1, 2)
#endif
  }
}
