/*
 * queue.pml: the fair waiting queue of redlock-proxy (quorum/queue.go
 * Enqueue, QueueBeat, Dequeue; quorum/queuebeats.go QueueBeats;
 * quorum/acquire.go AcquireWaiting; quorum/release.go ReleaseFair;
 * proxy/waits.go acquireWaiting, leaveQueue; backend/scripts queue.lua,
 * queuebeats.lua, acquire.lua (fair branch), delifeq.lua (Fair), undo.lua).
 * README.md maps each step to the code; queue_test.go runs it.
 *
 * One key, NB = 3 backends (Q = 2), one replica's health view. Client 1
 * holds the lock at the start (on every backend; it is no waiter); clients
 * 2 and 3 (and 4 with -DTHREE) are waiters (proxy/waits.go acquireWaiting):
 * each tries a fair acquire, enqueues when refused, then tries again, beats
 * its place, gives up (Dequeue), or pauses for good (its lease lapses).
 * A waiter that is granted may release (ReleaseFair) at any moment.
 *
 * Time is abstract: a clock in ticks 0..MAXT. TTL = 2 ticks, padding 1
 * tick: a lock written at w expires at w + 3; its note DELAY ticks later
 * (the lock-delay, NativeLockDelay). A waiter's lease is LEASE ticks on
 * each backend from the beat or add that landed there.
 *
 * Each backend script is one atomic step. A round's requests that land in
 * time land in the round's own atomic step (send + collect); the others are
 * lost, and an add (queue.lua "add") may instead land late: at any later
 * moment, after its round's verdict (uncounted). Acquires landing late are
 * mutex.pml's (rollback). A backend may restart empty (at most once): its
 * lock, note and queue go; it is quarantined for WIN ticks (health.go).
 * Mutants under #ifdef MUTANT_*.
 */

#define NB 3
#define Q 2
#define TTL 2
#define PAD 1
#define TTLP (TTL + PAD)
#ifndef DELAY
#define DELAY 1
#endif
#define WIN (TTLP + DELAY) /* Engine.ownWindow: the quarantine after a restart */
#ifndef LEASE
#define LEASE 2 /* waitLease: 4 session ticks, abstracted */
#endif
#ifndef MAXT
#define MAXT 5
#endif
#ifndef MAXENQ
#define MAXENQ 2 /* Enqueues per waiter */
#endif
#ifndef MAXF
#define MAXF 2 /* requests lost or late, in all */
#endif
#ifndef MAXTRY
#define MAXTRY 3 /* fair acquire rounds per waiter */
#endif
#ifdef THREE
#define NC 5
#else
#define NC 4
#endif

#define PEND 0
#define YES 1
#define NO 2

/* ---- backends ---- */
byte now;
byte val[NB];  /* the lock's value (a client), 0: absent */
byte kexp[NB];
bool note[NB]; /* the note beside the lock (lock-delay when left alone) */
byte nexp[NB];
byte tk[NB * NC]; /* QueueKey: client c's ticket on node n, 0: not queued */
byte ls[NB * NC]; /* its lease ends at this tick (the leases' sorted set) */
byte runid[NB] = 1;
byte qend[NB];    /* quarantined until (the replica's health view) */
byte restarts;
byte faults; /* requests lost or late so far */
byte lateT[NB * NC]; /* an add of c to n still out: its ticket, 0: none */
byte lateR[NB * NC]; /* ... sent to this run of n */

/* ---- the checker's bookkeeping (ghosts) ---- */
byte hend[NC]; /* client c's window ends at hend[c] (exclusive) */
bool rel[NC];  /* ... and it released it */
bool qdone[NC];  /* c's last Enqueue returned OK, and c still waits */
byte qa[NC];     /* the nodes (bit n) that counted that Enqueue's add */
bool broken[NC]; /* since then a node of qa[c] lost c's place (purge, restart, expiry) */
bool ahead[NC * NC]; /* ahead[a*NC+b]: a's Enqueue returned before b's last Enqueue began */

#define I(n, c) ((n) * NC + (c))
#define counts(n) (now >= qend[n])

/* a place lost on node n other than by c's own dequeue or release: it
 * voids c's promise (broken) when its lease there had lapsed or the node
 * restarted (RESTART sets broken itself); a live place purged keeps it */
#define LOSE(n, c) \
  if :: qdone[c] && (qa[c] & (1 << (n))) && ls[I(n, c)] <= now -> broken[c] = true :: else -> skip fi; \
  tk[I(n, c)] = 0; \
  if :: ls[I(n, c)] <= now -> ls[I(n, c)] = 0 :: else -> skip fi /* a live lease stays, a ghost: c still counts on it */

#define QLAPSED(m, w) (tk[I(m, w)] == 0 || ls[I(m, w)] <= now)
#ifdef THREE
#define QLAPSED4(m) QLAPSED(m, 4)
#else
#define QLAPSED4(m) true
#endif

/* ---- the environment: clock, expiries, restart, late adds ---- */
inline expire(m) {
  if :: val[m] != 0 && kexp[m] <= now -> val[m] = 0; kexp[m] = 0 :: else -> skip fi;
  if :: note[m] && nexp[m] <= now -> note[m] = false; nexp[m] = 0 :: else -> skip fi;
  /* queue.lua lease(): both queue keys live as long as the longest lease */
  if
  :: QLAPSED(m, 1) && QLAPSED(m, 2) && QLAPSED(m, 3) && QLAPSED4(m) -> w = 1; do :: w < NC -> if :: tk[I(m, w)] != 0 -> LOSE(m, w) :: else -> skip fi; w++ :: else -> break od; w = 0
  :: else -> skip
  fi
}

/* queue.lua "add": ZADD NX (a waiter queued already keeps its ticket), lease */
#define ADD(m, c, t) \
  if :: tk[I(m, c)] == 0 -> tk[I(m, c)] = t :: else -> skip fi; \
  ls[I(m, c)] = now + LEASE

#define LATE(m, c) \
  :: atomic { lateT[I(m, c)] != 0 -> \
       if :: lateR[I(m, c)] == runid[m] -> ADD(m, c, lateT[I(m, c)]) :: else -> skip fi; \
       lateT[I(m, c)] = 0; lateR[I(m, c)] = 0 }

#ifdef WITH_RESTART
#define RESTART(m) \
  :: atomic { restarts < 1 -> val[m] = 0; kexp[m] = 0; note[m] = false; nexp[m] = 0; \
       w = 1; do :: w < NC -> if :: tk[I(m, w)] != 0 && qdone[w] && (qa[w] & (1 << (m))) -> broken[w] = true :: else -> skip fi; \
                              tk[I(m, w)] = 0; ls[I(m, w)] = 0; w++ :: else -> break od; w = 0; \
       runid[m]++; restarts++; qend[m] = now + WIN }
#else
#define RESTART(m)
#endif

active proctype env() {
  byte n, w;
end_env:
  do
  :: atomic { now < MAXT -> now++; n = 0;
       do :: n < NB -> expire(n); n++ :: else -> break od; n = 0 }
  LATE(0, 2) LATE(1, 2) LATE(2, 2) LATE(0, 3) LATE(1, 3) LATE(2, 3)
#ifdef THREE
  LATE(0, 4) LATE(1, 4) LATE(2, 4)
#endif
  RESTART(0) RESTART(1) RESTART(2)
  od
}

/* ---- rounds ---- */
/* each request: in time (its answer counts when the node counts) or lost */
#define ROUND(EXEC) \
  n = 0; nyes = 0; nno = 0; \
  do \
  :: n < NB -> \
     if \
     :: EXEC; if :: counts(n) && ans == YES -> nyes++; rep[n] = YES \
                 :: counts(n) && ans == NO -> nno++; rep[n] = NO \
                 :: else -> rep[n] = PEND fi; ans = 0 \
     :: faults < MAXF -> faults++; rep[n] = PEND /* lost */ \
     fi; n++ \
  :: else -> break \
  od; n = 0

/* acquire.lua, fair branch (KEYS[6] the queue, KEYS[7] the leases, ARGV[6] c) */
#ifdef MUTANT_PURGE_BY_TICKET
#define LAPSED(m, w) (tk[I(m, w)] <= now) /* ZRANGEBYSCORE on the queue, not the leases */
#else
#define LAPSED(m, w) (ls[I(m, w)] <= now)
#endif
#define BEFORE(m, w, h) (tk[I(m, w)] < tk[I(m, h)] || tk[I(m, w)] == tk[I(m, h)] && w < h)
#define FAIRACQ \
  w = 1; /* purge the waiters whose lease ended */ \
  do :: w < NC -> if :: tk[I(n, w)] != 0 && LAPSED(n, w) -> LOSE(n, w) :: else -> skip fi; w++ \
     :: else -> break od; \
  w = 1; h = 0; /* the head: the least (ticket, name) */ \
  do :: w < NC -> if :: tk[I(n, w)] != 0 && (h == 0 || BEFORE(n, w, h)) -> h = w :: else -> skip fi; w++ \
     :: else -> break od; w = 0; \
  if \
  :: HEADBLOCKS -> ans = NO \
  :: else -> /* SET NX, and the note NX (a note left: lock-delay, refused) */ \
     if \
     :: val[n] == 0 && !note[n] -> val[n] = c; kexp[n] = now + TTLP; note[n] = true; nexp[n] = now + TTLP + DELAY; ans = YES \
     :: else -> ans = NO \
     fi \
  fi; h = 0
#ifdef MUTANT_IGNORE_HEAD
#define HEADBLOCKS false
#else
#define HEADBLOCKS (h != 0 && h != c)
#endif

/* queue.lua "tail" */
#define TAIL \
  w = 1; t = 0; \
  do :: w < NC -> if :: tk[I(n, w)] > t -> t = tk[I(n, w)] :: else -> skip fi; w++ :: else -> break od; w = 0; \
  if :: t > tail -> tail = t :: else -> skip fi; t = 0; ans = YES

/* queue.lua "beat" / queuebeats.lua: renew only while queued */
#define BEAT \
  if :: tk[I(n, c)] != 0 -> ls[I(n, c)] = now + LEASE; ans = YES :: else -> ans = NO fi

/* queue.lua "del" */
#define DEQ tk[I(n, c)] = 0; ls[I(n, c)] = 0; ans = YES

/* delifeq.lua with Fair: the lock and its note go, the holder leaves the queue */
#define DELFAIR \
  if :: val[n] == c -> val[n] = 0; kexp[n] = 0; note[n] = false; nexp[n] = 0; tk[I(n, c)] = 0; ls[I(n, c)] = 0; ans = YES \
     :: else -> ans = NO fi

/* I1 and I3 (mutex.pml): no other client inside its window, nor inside the
 * lock-delay after a window it ended unreleased */
#define FREE(d) (d == c || hend[d] == 0 || rel[d] && hend[d] <= now || !rel[d] && hend[d] + DELAY <= now)
/* I2: no live earlier waiter that a quorum has queued ahead is overtaken */
/* live on node n: its lease there has not lapsed (a place removed while
 * its lease runs, only by a mutant, still counts: LOSE keeps ls) */
#define LIVE(a) ((ls[I(0, a)] > now -> 1 : 0) + (ls[I(1, a)] > now -> 1 : 0) + (ls[I(2, a)] > now -> 1 : 0))
#ifdef NO_BROKEN_GHOST
#define INTACT(a) true
#else
#define INTACT(a) (!broken[a])
#endif
#define FIRST(a) (a == c || !(ahead[I(a, c)] && qdone[a] && INTACT(a) && LIVE(a) >= Q))
#ifdef THREE
#define CHECK_GRANT assert(FREE(1) && FREE(2) && FREE(3) && FREE(4)); assert(FIRST(2) && FIRST(3) && FIRST(4))
#else
#define CHECK_GRANT assert(FREE(1) && FREE(2) && FREE(3)); assert(FIRST(2) && FIRST(3))
#endif

/* ReleaseFair (quorum/release.go release, delifeq.lua Fair) by a client inside its window */
#define RELEASE_FAIR \
  atomic { hend[c] > now -> hend[c] = now; rel[c] = true; ROUND(DELFAIR); RESETREP }

#define RESETREP rep[0] = 0; rep[1] = 0; rep[2] = 0; nyes = 0; nno = 0

/* the holder at the start: client 1, window [0, TTL), on every node */
active proctype Holder() {
  byte n, nyes, nno, ans, w, h;
  byte rep[NB];
  byte c = 1;
  if
  :: RELEASE_FAIR
  :: true /* leaves the lock to its TTL */
  fi
}

/* proxy/waits.go acquireWaiting, for waiter c */
proctype Waiter(byte c) {
  byte n, nyes, nno, ans, w, h, t, tail, s, enqs, tries, beat;
  byte rep[NB];
  bool queued, fresh;
try: /* Engine.AcquireWaiting: acquire round, verdict */
  atomic {
    if :: tries >= MAXTRY && queued -> goto dequeue :: tries >= MAXTRY -> goto quit :: else -> tries++ fi; /* the bound: it gives up */
    s = now; ROUND(FAIRACQ);
    if
    :: nyes >= Q && now < s + TTL ->
       CHECK_GRANT;
       hend[c] = s + TTL; rel[c] = false; qdone[c] = false; RESETREP; s = 0;
       goto granted
    :: else -> /* rollback (undo.lua: what this round wrote) */
       n = 0;
       do :: n < NB -> if :: rep[n] == YES && val[n] == c -> val[n] = 0; kexp[n] = 0; note[n] = false; nexp[n] = 0
                          :: else -> skip fi; n++
          :: else -> break od;
       RESETREP; s = 0
    fi
  }
  if
  :: !queued -> goto enqueue
  :: else -> goto wait
  fi;
enqueue: /* Engine.Enqueue: tail round, then add round */
  atomic {
    if :: enqs >= MAXENQ -> goto quit :: else -> enqs++ fi; tail = 0;
    qdone[c] = false;
    /* fresh: c has no place left on any node, nor an add still out: it
     * starts at the back (a place left keeps its ticket: ZADD NX) */
    fresh = (tk[I(0, c)] == 0 && tk[I(1, c)] == 0 && tk[I(2, c)] == 0 &&
             lateT[I(0, c)] == 0 && lateT[I(1, c)] == 0 && lateT[I(2, c)] == 0);
#ifdef STRICT_BACK
    fresh = true; /* waits.go: BeatGone "queue again, at the back" */
#endif
    n = 1;
    do :: n < NC -> ahead[I(n, c)] = (fresh && n != c && qdone[n] && !broken[n]); ahead[I(c, n)] = false; n++ :: else -> break od;
    fresh = false;
    ROUND(TAIL);
    if :: nyes < Q -> RESETREP; goto quit :: else -> RESETREP fi
  }
  atomic {
    tail++;
    n = 0; nyes = 0;
    do
    :: n < NB ->
       if
       :: ADD(n, c, tail); if :: counts(n) -> nyes++; rep[n] = YES :: else -> skip fi
       :: faults < MAXF && lateT[I(n, c)] == 0 -> faults++; lateT[I(n, c)] = tail; lateR[I(n, c)] = runid[n] /* late */
       :: faults < MAXF -> faults++ /* lost */
       fi; n++
    :: else -> break
    od; n = 0;
    if
    :: nyes >= Q -> queued = true; qdone[c] = true; broken[c] = false;
       qa[c] = (rep[0] == YES -> 1 : 0) + (rep[1] == YES -> 2 : 0) + (rep[2] == YES -> 4 : 0);
       RESETREP; tail = 0; goto try /* it may be first already */
    :: else -> RESETREP; tail = 0; goto dequeue /* Enqueue's own Dequeue, then the error */
    fi
  };
wait: /* woken (release, a waiter leaving, its timer), or a beat, or it gives up or pauses */
  if
  :: goto try
  :: atomic { beat != now + 1 -> beat = now + 1; /* QueueBeats (beats.go run, once a tick): renew its lease */
       ROUND(BEAT);
       if
       :: nyes >= Q -> RESETREP; goto wait
       :: nno > NB - Q -> RESETREP; queued = false; qdone[c] = false; goto try /* BeatGone: queue again, at the back */
       :: else -> RESETREP; goto wait /* BeatUnknown */
       fi }
  :: goto dequeue /* leaveQueue: WAIT ran out, hung up, or shutting down */
  :: goto quit /* paused for good (its replica died): its lease lapses */
  fi;
dequeue: /* Engine.Dequeue: every node, in time or lost */
  atomic { qdone[c] = false; queued = false; ROUND(DEQ); RESETREP };
  goto quit;
granted:
  if
  :: RELEASE_FAIR /* releaseFair; the holder leaves the queue */
  :: true
  fi;
quit:
  skip
}

init {
  byte n;
  atomic {
    do
    :: n < NB -> val[n] = 1; kexp[n] = TTLP; note[n] = true; nexp[n] = TTLP + DELAY; n++
    :: else -> break
    od;
    hend[1] = TTL;
    run Waiter(2); run Waiter(3)
#ifdef THREE
    ; run Waiter(4)
#endif
  }
}
