/*
 * sessions.pml: a session lock (LOCK.ACQUIRE ... SESSION) renewed by the
 * replica that booked it, left or released when its connection closes,
 * re-attached by its holder through another replica, and extended from
 * another connection (proxy/sessions.go, proxy/reattach.go; quorum/renew.go
 * Engine.Renew, acquire.go Engine.Reattach, Engine.Extend, rollback,
 * release.go Engine.ReleaseRound; backend/scripts pexpireifeq.lua,
 * reattach.lua, extend.lua, delifeq.lua, acquire.lua, undo.lua).
 * README.md maps each step to the code; model_test.go runs it.
 *
 * One key, NB = 3 backends (Q = 2). The holder (client 1) took the lock
 * through replica A with round 1 before the run starts (mutex.pml checks
 * acquires): it is on every backend, its window open until TTLA (with
 * SCEN_UNDO, A's verdict failed instead: no window, and A rolls back with
 * undo.lua naming round 1, at any moment). Then, in any order and at any
 * moment:
 *  - replica A's renewer renews it (up to MAXREN rounds, each naming round 1)
 *    while A has it booked; a renewal that finds it gone from a quorum, or
 *    whose window ended unrenewed, drops it for good (lost);
 *  - A notices the connection closed (at any moment, however late): the
 *    holder stops counting on A's window; A leaves the lock to its TTL (a
 *    graceful shutdown) or releases it naming round 1 (sessions.closed):
 *    where a live pin names the holder's value the release leaves the lock
 *    and strips the session mark from round 1 (now a timed lock, RAT);
 *  - the holder re-attaches through replica B with a longer TTL (TTLB > TTLA:
 *    an old renewal that still reached it would shorten it), noting round 2,
 *    and B renews it naming round 2 (not with NO_REATTACH);
 *  - an extend from another connection or replica by a client that knows the
 *    value (a second connection of the holder: Engine.Extend, extend.lua with
 *    ARGV[5] "1"; up to MAXEXT of them) KEEPS the round (the lock stays in
 *    its session), never shortens a lock whose round has the session mark,
 *    and pins its promise (a pin key with the value for the padded TTLE,
 *    never shortened for a session's lock); an OK needs Q yes votes in time
 *    and opens a window of TTLE that no connection's close ends;
 *  - another client (2) tries to take the lock, rolling back on failure.
 * Every request to a backend lands in time (its answer counts), or late, at
 * any later moment (after its round's verdict, uncounted), or never.
 * Time is abstract: ticks 0..MAXT; a key extended at tick t for ttl expires
 * at t + ttl + PAD (padding for drift, the note records it); a script
 * extends a key only while more than PAD is left (the holder's window).
 * With WITH_RESTART a backend may restart empty once: a renewal then
 * restores the lock there (key and note absent) naming its round, and the
 * replicas quarantine the node for the longest window (health.go): it
 * counts for no round until then.
 * Not modelled: SET XX (setxx.lua: same value keeps the round and pins for
 * exactly its TTL, another value drops the pin) and the holder's release
 * without a round (delifeq.lua deletes lock and pin).
 *
 * Invariant (CHECK_OTHER at every OK that opens or extends a window): no
 * other client is inside its window; the holder's window is the latest of
 * A's, B's and the extend's. Mutants: release, renewal or re-attach
 * ignoring the round (the value-only scripts before issue 28's fix);
 * MUTANT_RELEASE_IGNORES_PIN (delifeq.lua with a round and undo.lua delete
 * a pinned lock); MUTANT_EXTEND_SHORTENS (extend.lua sets a session lock's
 * TTL to the extend's, shorter than B's re-attach promised).
 */

#define NB 3
#define Q 2
#define PAD 1
#define TTLA 2
#define TTLB 3
#define TTLC 2
#define TTLE 1 /* the extend from elsewhere: shorter than B's, so a shortening shows */
#ifndef MAXT
#define MAXT 6
#endif
#ifndef MAXREN
#define MAXREN 2
#endif
#ifndef MAXEXT
#define MAXEXT 1 /* extends from elsewhere per run */
#endif
#define WIN (TTLB + PAD) /* the quarantine window: the longest padded TTL */

#define RA 1 /* the round A's grant noted */
#define RB 2 /* the round B's re-attach notes */
#define RC 3 /* the contender's acquire round */
#define RAT 4 /* RA without the session mark: A's close left a pinned lock, now a timed lock */
#define MARKED(m) (rnd[m] == RA || rnd[m] == RB) /* a session's lock: round ends with "@" */

#define YES 1
#define NO 2
#define FAILED 3

#define OP_RENA 1  /* A's renewal: pexpireifeq.lua naming RA, TTLA */
#define OP_RELA 2  /* A's release at close: delifeq.lua naming RA */
#define OP_REATT 3 /* B's re-attach: reattach.lua noting RB, TTLB */
#define OP_RENB 4  /* B's renewal: pexpireifeq.lua naming RB, TTLB */
#define OP_ACQC 5  /* the contender's acquire: acquire.lua, round RC */
#define OP_UNDOC 6 /* its rollback: undo.lua, round RC */
#define OP_EXTE 7  /* the extend from elsewhere: extend.lua, ARGV[5] "1", TTLE */
#define OP_UNDOA 8 /* the rollback of A's acquire when its verdict failed: undo.lua, round RA */

byte now;
byte val[NB] = 1;           /* the key's value (a client), 0: absent */
byte kexp[NB] = TTLA + PAD; /* the tick it expires at */
byte rnd[NB] = RA;          /* its note's round, 0: absent */
byte pexp[NB];              /* the pin (value 1: only the holder extends): the tick it expires at, 0: absent */
byte runid[NB] = 1;
byte qend[NB]; /* quarantined until (both replicas see a restart at once: it is one INFO away) */
byte restarts;

/* the checker's view */
byte untilA = TTLA; /* the holder's window through A's booking (ends when A's connection closes) */
byte untilB;        /* ... through B's, after the re-attach */
byte untilE;        /* ... through the extend from elsewhere (no connection's close ends it) */
byte cend;          /* the contender's window */
bool bookedA = true, bookedB;
byte bookB;         /* B's renewer's window (its booking, the re-attach's verdict aside) */

#define counts(m) (now >= qend[m])
#define HAB (untilA > untilB -> untilA : untilB)
#define HEND (HAB > untilE -> HAB : untilE)

#ifdef MUTANT_RENEW_BY_VALUE
#define RENEW_MATCH(m, r) true
#else
#define RENEW_MATCH(m, r) (rnd[m] == r)
#endif
#ifdef MUTANT_RELEASE_BY_VALUE
#define RELEASE_MATCH(m) true
#else
#define RELEASE_MATCH(m) (rnd[m] == RA)
#endif
#ifdef MUTANT_RELEASE_IGNORES_PIN
#define PINNED(m) false
#else
#define PINNED(m) (pexp[m] != 0) /* a live pin naming the holder's value */
#endif
#ifdef MUTANT_EXTEND_SHORTENS
#define EXTEND_TTL(m) kexp[m] = now + TTLE + PAD
#else
#define EXTEND_TTL(m) \
  if :: MARKED(m) && kexp[m] > now + TTLE + PAD -> skip :: else -> kexp[m] = now + TTLE + PAD fi
#endif
#ifdef MUTANT_REATTACH_KEEPS_ROUND
#define NEWROUND(m) rnd[m]
#else
#define NEWROUND(m) RB
#endif

/* pexpireifeq.lua with a round: extend while held by the holder with that
 * round and its window open there, or with an earlier round of the same
 * lock (its token: B's renewal adopts a backend B's re-attach missed, and
 * counts it); restore where key and note are absent (Renew's restore,
 * noting the round) */
#define ADOPTS(m, r) (r == RB && (rnd[m] == RA || rnd[m] == RAT)) /* an earlier round of the same lock */
#define RENEW(m, r, ttl) \
  if \
  :: val[m] == 1 && RENEW_MATCH(m, r) && kexp[m] - now > PAD -> kexp[m] = now + ttl + PAD; ans = YES \
  :: val[m] == 1 && !RENEW_MATCH(m, r) && ADOPTS(m, r) && kexp[m] - now > PAD -> rnd[m] = r; kexp[m] = now + ttl + PAD; ans = YES \
  :: val[m] == 0 -> val[m] = 1; rnd[m] = r; kexp[m] = now + ttl + PAD; ans = FAILED /* restored: not counted */ \
  :: else -> ans = NO \
  fi

/* what node m does with op (one Lua script, atomic) */
#define EXEC(m) \
  if \
  :: op == OP_RENA -> RENEW(m, RA, TTLA) \
  :: op == OP_RENB -> RENEW(m, RB, TTLB) \
  :: op == OP_RELA -> \
     if \
     :: val[m] == 1 && PINNED(m) -> if :: rnd[m] == RA -> rnd[m] = RAT :: else -> skip fi; ans = NO \
     :: val[m] == 1 && !PINNED(m) && RELEASE_MATCH(m) -> val[m] = 0; rnd[m] = 0; kexp[m] = 0; pexp[m] = 0; ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_UNDOA -> \
     if :: val[m] == 1 && rnd[m] == RA && !PINNED(m) -> val[m] = 0; rnd[m] = 0; kexp[m] = 0 :: else -> skip fi; ans = 0 \
  :: op == OP_EXTE -> \
     if \
     :: val[m] == 1 && kexp[m] - now > PAD -> EXTEND_TTL(m); \
        if :: MARKED(m) && pexp[m] >= now + TTLE + PAD -> skip :: else -> pexp[m] = now + TTLE + PAD fi; ans = YES \
     :: else -> ans = NO \
     fi \
  :: op == OP_REATT -> \
     if :: val[m] == 1 && kexp[m] - now > PAD -> kexp[m] = now + TTLB + PAD; rnd[m] = NEWROUND(m); ans = YES :: else -> ans = NO fi \
  :: op == OP_ACQC -> \
     if :: val[m] == 0 -> val[m] = 2; rnd[m] = RC; kexp[m] = now + TTLC + PAD; ans = YES :: else -> ans = NO fi \
  :: op == OP_UNDOC -> \
     if :: val[m] == 2 && rnd[m] == RC -> val[m] = 0; rnd[m] = 0; kexp[m] = 0 :: else -> skip fi; ans = 0 \
  fi

/* a request to node m lands in time (counted: a yes only from a node that
 * counts and did not restart since it was sent), or is left pending: it
 * lands later, at any moment, or never */
#define INTIME(m) \
  if \
  :: tag[m] == runid[m] -> EXEC(m); \
     if :: ans == YES && !counts(m) -> rep[m] = FAILED :: else -> rep[m] = ans fi; ans = 0 \
  :: true -> rep[m] = FAILED; pend[m] = true \
  fi
/* B's renewals' and the contender's requests land in time or never: their
 * late landings only extend or write keys where a later round answers no
 * (a restore is never counted by the round that made it), so they cannot
 * open a window; A's and B's re-attach's land late too (LATE: B books the
 * re-attach's round whatever its verdict, so its late landings are ones
 * B's renewals count), the hazards this model is about */
#define ONTIME(m) \
  if \
  :: tag[m] == runid[m] -> EXEC(m); \
     if :: ans == YES && !counts(m) -> rep[m] = FAILED :: else -> rep[m] = ans fi; ans = 0 \
  :: true -> rep[m] = FAILED \
  fi
#define SEND tag[0] = runid[0]; tag[1] = runid[1]; tag[2] = runid[2]
#define COLLECT INTIME(0); INTIME(1); INTIME(2)
#define COLLECT_ONTIME ONTIME(0); ONTIME(1); ONTIME(2)
#define NYES ((rep[0] == YES -> 1 : 0) + (rep[1] == YES -> 1 : 0) + (rep[2] == YES -> 1 : 0))
#define NNO ((rep[0] == NO -> 1 : 0) + (rep[1] == NO -> 1 : 0) + (rep[2] == NO -> 1 : 0))
/* dead values cleared, so that equal futures are one state */
#define RESET rep[0] = 0; rep[1] = 0; rep[2] = 0; s = 0; \
  if :: !pend[0] -> tag[0] = 0 :: else -> skip fi; \
  if :: !pend[1] -> tag[1] = 0 :: else -> skip fi; \
  if :: !pend[2] -> tag[2] = 0 :: else -> skip fi
#define LAND(m) \
  :: atomic { pend[m] -> pend[m] = false; if :: tag[m] == runid[m] -> EXEC(m); ans = 0 :: true -> skip fi; tag[m] = 0 }
#define LOSE(m) :: atomic { pend[m] -> pend[m] = false; tag[m] = 0 }
#define DRAIN \
  do \
  LAND(0) LAND(1) LAND(2) LOSE(0) LOSE(1) LOSE(2) \
  :: atomic { !pend[0] && !pend[1] && !pend[2] -> break } \
  od

/* no other client inside its window when c's OK opens or extends its own */
#define CHECK_HOLDER assert(cend <= now)
#define CHECK_CONTENDER assert(HEND <= now)

active proctype env() {
  byte n;
end_env:
  do
  :: atomic { now < MAXT -> now++;
       n = 0;
       do
       :: n < NB -> if :: val[n] != 0 && kexp[n] <= now -> val[n] = 0; rnd[n] = 0; kexp[n] = 0 :: else -> skip fi;
          if :: pexp[n] != 0 && pexp[n] <= now -> pexp[n] = 0 :: else -> skip fi; n++
       :: else -> break
       od; n = 0 }
#ifdef WITH_RESTART
  :: atomic { restarts < 1 -> n = 0;
       do
       :: n < NB - 1 -> n++
       :: break
       od;
       val[n] = 0; rnd[n] = 0; kexp[n] = 0; pexp[n] = 0; runid[n]++; qend[n] = now + WIN; restarts++; n = 0 }
#endif
  od
}

/* Replica A: its renewer (sessions.renewDue, Engine.Renew), then the close
 * of the holder's connection (sessions.closed: the release waits for the
 * renewal round out, awaitRenewal; late requests of both still land) */
active proctype Replica_A() {
  byte s, ans, i, op;
  byte rep[NB], tag[NB];
  bool pend[NB];
#ifndef SCEN_UNDO
  if
  :: true -> skip /* A's acquire was granted (the run's start) */
  fi;
#else
  if
  :: atomic { /* or its verdict failed (validity spent: acquire.go verdict): no window, and
                 A rolls back its round's writes (rollback, undo.lua naming RA) */
       untilA = 0; bookedA = false; op = OP_UNDOA; SEND }
     atomic { COLLECT; RESET }
     goto drain
  fi;
#endif
  do
  :: atomic { bookedA && i < MAXREN && now < untilA -> i++; s = now; op = OP_RENA; SEND } /* a window ended unrenewed: lost (renewDue) */
     atomic {
       COLLECT;
       if
       :: NYES >= Q && now < s + TTLA -> CHECK_HOLDER; if :: untilA < s + TTLA -> untilA = s + TTLA :: else -> skip fi
       :: NNO > NB - Q || now >= untilA -> bookedA = false /* lost: never renewed again */
       :: else -> skip /* no quorum now: the next tick tries again */
       fi;
       RESET
     }
  :: atomic { /* the connection closed: the holder stops counting on A */
       if :: untilA > now -> untilA = now :: else -> skip fi; bookedA = false;
       if
       :: true -> goto drain /* a graceful shutdown leaves it to its TTL */
       :: true -> op = OP_RELA; SEND
       fi }
     atomic { COLLECT; RESET }
     goto drain
  od;
drain:
  DRAIN
}

/* Replica B: the holder's re-attach (proxy/reattach.go, Engine.Reattach),
 * then B's renewer naming the new round. B books the round whatever the
 * verdict (the lock moves when the round is sent: a round that failed to
 * reach a quorum in time may have landed all the same, in time or late,
 * and its booking's renewals tell). The holder counts on B's window after
 * an OK only; after an error it re-attaches again on B's connection before
 * relying on it, which answers OK only where a renewal would: every
 * renewal OK of B's booking is counted as the holder's window (CHECK_HOLDER
 * there), whatever the re-attach answered. The re-attach's requests land
 * in time, late (at any moment while B renews, or after) or never. */
/* a late landing of the re-attach's request to node m (reattach.lua); one
 * that has not landed when B stops never does */
#define LATE(m) \
  :: atomic { late[m] != 0 -> if :: late[m] == runid[m] -> op = OP_REATT; EXEC(m); op = OP_RENB :: else -> skip fi; late[m] = 0; ans = 0 }
#ifndef NO_REATTACH /* without it: no re-attach (one process fewer) */
active proctype Replica_B() {
  byte s, ans, i, op = OP_REATT;
  byte rep[NB], tag[NB];
  bool pend[NB];
  byte late[NB]; /* the re-attach's requests still on their way: their tag (runid sent to), 0: none */
  atomic { s = now; SEND }
  atomic {
#ifdef REATTACH_ONTIME /* its requests land in time or never: fewer states, for configurations about other things */
    COLLECT_ONTIME;
#else
    COLLECT;
    late[0] = (pend[0] -> tag[0] : 0); late[1] = (pend[1] -> tag[1] : 0); late[2] = (pend[2] -> tag[2] : 0);
    pend[0] = false; pend[1] = false; pend[2] = false;
#endif
    if
    :: NYES >= Q && now < s + TTLB -> CHECK_HOLDER; untilB = s + TTLB
#ifdef MUTANT_REATTACH_OK_WITHOUT_QUORUM /* the verdict ignored: OK whatever the votes */
    :: else -> untilB = s + TTLB
#else
    :: else -> skip /* an error: the holder counts on nothing yet */
#endif
    fi;
    bookedB = true; /* booked whatever the verdict */
    bookB = s + TTLB; /* the renewer's window: the round's, as if granted (bookSession) */
    RESET
  }
  op = OP_RENB;
  do
  :: atomic { bookedB && i < MAXREN && now < bookB -> i++; s = now; SEND }
     atomic {
       COLLECT_ONTIME;
       if
       :: NYES >= Q && now < s + TTLB -> CHECK_HOLDER;
          if :: untilB < s + TTLB -> untilB = s + TTLB :: else -> skip fi;
          if :: bookB < s + TTLB -> bookB = s + TTLB :: else -> skip fi
       :: NNO > NB - Q || now >= bookB -> bookedB = false
       :: else -> skip
       fi;
       RESET
     }
  LATE(0) LATE(1) LATE(2)
  :: atomic { !bookedB || i >= MAXREN || now >= bookB -> break }
  od
}
#endif

/* An extend from another connection or replica by a client that knows the
 * value (a second connection of the holder: Engine.Extend, extend.lua with
 * ARGV[5] "1"): OK on Q counting yes votes in time; the window it promised
 * is the holder's whatever connection closes. Its requests land in time or
 * never, as B's: a late landing only extends the holder's key (a timed
 * lock's to a later end than the round's own) and pins it longer, which
 * opens no window */
#if MAXEXT > 0
active proctype Extender() {
  byte s, ans, i, op = OP_EXTE;
  byte rep[NB], tag[NB];
  bool pend[NB];
  do
  :: atomic { i < MAXEXT -> i++; s = now; SEND }
     atomic {
       COLLECT_ONTIME;
       if
       :: NYES >= Q && now < s + TTLE -> CHECK_HOLDER; if :: untilE < s + TTLE -> untilE = s + TTLE :: else -> skip fi
       :: else -> skip
       fi;
       RESET
     }
  :: atomic { i >= MAXEXT -> break }
  od
}
#endif

/* Another client's acquire (Engine.acquire): granted with Q counting yes
 * votes and validity left; else drained and rolled back (its own round) */
active proctype Contender() {
  byte s, ans, op = OP_ACQC;
  byte rep[NB], tag[NB];
  bool pend[NB];
  atomic { s = now; SEND }
  atomic {
    COLLECT_ONTIME;
    if
    :: NYES >= Q && now < s + TTLC -> CHECK_CONTENDER; cend = s + TTLC; op = 0
    :: else -> skip
    fi;
    RESET
  }
  if
  :: op == OP_ACQC -> atomic { op = OP_UNDOC; ans = 0; EXEC(0); EXEC(1); EXEC(2) }
  :: else -> skip
  fi
}
