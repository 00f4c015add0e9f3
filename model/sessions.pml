/*
 * sessions.pml: a session lock (LOCK.ACQUIRE ... SESSION) renewed by the
 * replica that booked it, left or released when its connection closes, and
 * re-attached by its holder through another replica (proxy/sessions.go,
 * proxy/reattach.go; quorum/renew.go Engine.Renew, acquire.go
 * Engine.Reattach, release.go Engine.ReleaseRound; backend/scripts
 * pexpireifeq.lua, reattach.lua, delifeq.lua, acquire.lua, undo.lua).
 * README.md maps each step to the code; model_test.go runs it.
 *
 * One key, NB = 3 backends (Q = 2). The holder (client 1) took the lock
 * through replica A with round 1 before the run starts (mutex.pml checks
 * acquires): it is on every backend, its window open until TTLA. Then, in
 * any order and at any moment:
 *  - replica A's renewer renews it (up to MAXREN rounds, each naming round 1)
 *    while A has it booked; a renewal that finds it gone from a quorum, or
 *    whose window ended unrenewed, drops it for good (lost);
 *  - A notices the connection closed (at any moment, however late): the
 *    holder stops counting on A's window; A leaves the lock to its TTL (a
 *    graceful shutdown) or releases it naming round 1 (sessions.closed);
 *  - the holder re-attaches through replica B with a longer TTL (TTLB > TTLA:
 *    an old renewal that still reached it would shorten it), noting round 2,
 *    and B renews it naming round 2, or never (an extend from another
 *    connection: Engine.Extend notes a new round, as reattach.lua does, and
 *    no session books it: its window is the one the extend promised);
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
 *
 * Invariant (CHECK_OTHER at every OK that opens or extends a window): no
 * other client is inside its window. Mutants: release, renewal or re-attach
 * ignoring the round (the value-only scripts before issue 28's fix).
 */

#define NB 3
#define Q 2
#define PAD 1
#define TTLA 2
#define TTLB 3
#define TTLC 2
#ifndef MAXT
#define MAXT 6
#endif
#ifndef MAXREN
#define MAXREN 2
#endif
#define WIN (TTLB + PAD) /* the quarantine window: the longest padded TTL */

#define RA 1 /* the round A's grant noted */
#define RB 2 /* the round B's re-attach notes */
#define RC 3 /* the contender's acquire round */

#define YES 1
#define NO 2
#define FAILED 3

#define OP_RENA 1  /* A's renewal: pexpireifeq.lua naming RA, TTLA */
#define OP_RELA 2  /* A's release at close: delifeq.lua naming RA */
#define OP_REATT 3 /* B's re-attach: reattach.lua noting RB, TTLB */
#define OP_RENB 4  /* B's renewal: pexpireifeq.lua naming RB, TTLB */
#define OP_ACQC 5  /* the contender's acquire: acquire.lua, round RC */
#define OP_UNDOC 6 /* its rollback: undo.lua, round RC */

byte now;
byte val[NB] = 1;           /* the key's value (a client), 0: absent */
byte kexp[NB] = TTLA + PAD; /* the tick it expires at */
byte rnd[NB] = RA;          /* its note's round, 0: absent */
byte runid[NB] = 1;
byte qend[NB]; /* quarantined until (both replicas see a restart at once: it is one INFO away) */
byte restarts;

/* the checker's view */
byte untilA = TTLA; /* the holder's window through A's booking (ends when A's connection closes) */
byte untilB;        /* ... through B's, after the re-attach */
byte cend;          /* the contender's window */
bool bookedA = true, bookedB;

#define counts(m) (now >= qend[m])
#define HEND (untilA > untilB -> untilA : untilB)

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
#ifdef MUTANT_REATTACH_KEEPS_ROUND
#define NEWROUND(m) rnd[m]
#else
#define NEWROUND(m) RB
#endif

/* pexpireifeq.lua with a round: extend while held by the holder with that
 * round and its window open there; restore where key and note are absent
 * (Renew's restore, noting the round) */
#define RENEW(m, r, ttl) \
  if \
  :: val[m] == 1 && RENEW_MATCH(m, r) && kexp[m] - now > PAD -> kexp[m] = now + ttl + PAD; ans = YES \
  :: val[m] == 0 -> val[m] = 1; rnd[m] = r; kexp[m] = now + ttl + PAD; ans = FAILED /* restored: not counted */ \
  :: else -> ans = NO \
  fi

/* what node m does with op (one Lua script, atomic) */
#define EXEC(m) \
  if \
  :: op == OP_RENA -> RENEW(m, RA, TTLA) \
  :: op == OP_RENB -> RENEW(m, RB, TTLB) \
  :: op == OP_RELA -> \
     if :: val[m] == 1 && RELEASE_MATCH(m) -> val[m] = 0; rnd[m] = 0; kexp[m] = 0; ans = YES :: else -> ans = NO fi \
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
/* B's and the contender's requests land in time or never: their late
 * landings only extend or write keys where a later round answers no (a
 * restore is never counted by the round that made it), so they cannot
 * open a window; A's land late too, the hazard this model is about */
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
       :: n < NB -> if :: val[n] != 0 && kexp[n] <= now -> val[n] = 0; rnd[n] = 0; kexp[n] = 0 :: else -> skip fi; n++
       :: else -> break
       od; n = 0 }
#ifdef WITH_RESTART
  :: atomic { restarts < 1 -> n = 0;
       do
       :: n < NB - 1 -> n++
       :: break
       od;
       val[n] = 0; rnd[n] = 0; kexp[n] = 0; runid[n]++; qend[n] = now + WIN; restarts++; n = 0 }
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
 * then B's renewer naming the new round */
active proctype Replica_B() {
  byte s, ans, i, op = OP_REATT;
  byte rep[NB], tag[NB];
  bool pend[NB];
  atomic { s = now; SEND }
  atomic {
    COLLECT_ONTIME;
    if
    :: NYES >= Q && now < s + TTLB -> CHECK_HOLDER; untilB = s + TTLB; bookedB = true
    :: else -> skip
    fi;
    RESET
  }
  op = OP_RENB;
  do
  :: atomic { bookedB && i < MAXREN && now < untilB -> i++; s = now; SEND }
     atomic {
       COLLECT_ONTIME;
       if
       :: NYES >= Q && now < s + TTLB -> CHECK_HOLDER; if :: untilB < s + TTLB -> untilB = s + TTLB :: else -> skip fi
       :: NNO > NB - Q || now >= untilB -> bookedB = false
       :: else -> skip
       fi;
       RESET
     }
  :: atomic { !bookedB || i >= MAXREN || now >= untilB -> break }
  :: atomic { bookedB -> break } /* or nothing renews it: an extend from another
                                    connection (Engine.Extend notes a new round as
                                    a re-attach does, and no session books it) */
  od
}

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
