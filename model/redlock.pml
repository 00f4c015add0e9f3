/*
 * redlock.pml: a model of redlock-proxy's lock protocol (package quorum and
 * backend/scripts/*.lua) for spin. See README.md for what is modelled, the
 * abstraction of time and the bounds; model_test.go runs it and its mutants.
 *
 * One key. NB backends, NR proxy replicas, clients 1 and 2 (a client's lock
 * value is its id). A client is folded into the replica that serves it: a
 * replica takes a request from any client at any moment, so a client may
 * retry through the other replica while its first round is still out.
 *
 * Time: a global clock `now` in ticks, 0..MAXT. A key written at tick w with
 * the padded TTL TTLP = TTL + PAD expires at w + TTLP, but drift lets a node
 * drop it one tick early (Drift in env). A client's window is
 * [arrival, arrival + TTL): the DESIGN.md contract.
 */

#ifndef RESERVED_REFUSED
#define RESERVED_REFUSED 1
#endif

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
#define W TTLP /* quarantine window: the longest padded TTL (no lock-delay modelled) */
#ifndef MAXT
#define MAXT 5
#endif
#ifndef MAXACQ
#define MAXACQ 3 /* acquire rounds in a run: round ids 1..MAXACQ */
#endif
#ifndef MAXRESTART
#define MAXRESTART 1 /* backend restarts in a run: fewer than Q nodes faulty */
#endif
#ifndef MAXFIX
#define MAXFIX 2 /* TokenOf operations in a run */
#endif

/* A reply, as round.go's vote. */
#define NONE 0
#define YES 1
#define NO 2
#define FAILED 3
#define QUAR 4 /* did it, but may not count: quarantined */

/* Operations a replica sends to a node (what one Lua script does, atomically). */
#define OP_ACQUIRE 1 /* acquire.lua (plain: no token) */
#define OP_UNDO 2    /* undo.lua: rollback by round id */
#define OP_DELIFEQ 3 /* delifeq.lua: release */
#define OP_EXTEND 4  /* pexpireifeq.lua */
#define OP_READ 5    /* the lock, its note and noted token */
#define OP_CTR 6     /* raise.lua to 0: read the token counter */
#define OP_RAISE 7   /* raise.lua with a lock: raise the counter, note the token */

/* ---- backends ---- */
byte now;
byte val[NB];  /* the lock's value (a client id), 0: absent */
byte kexp[NB]; /* the tick it expires at */
byte note[NB]; /* MetaKey: the round id that wrote it */
byte tok[NB];  /* the token noted beside it */
byte runid[NB];  /* run_id */
byte mark[NB]; /* IntactKey: the run it was marked on, 0: none */
byte ctr[NB];  /* TokenKey: the token counter */
byte rstart[NB]; /* when its current run began */
byte restarts;

/* ---- replicas' health views, index r*NB+n ---- */
byte seen[NR * NB]; /* the run_id it last read */
byte qend[NR * NB]; /* quarantined until this tick of its own clock */
bool iv[NR * NB];   /* intact as it last read */
bool booted[NR];

/* ---- the checker's bookkeeping ---- */
byte hend[3];           /* client c believes it holds until hend[c] (exclusive) */
byte nextrid;           /* acquire rounds started */
byte ngrant;            /* grants so far */
byte gof[MAXACQ + 1];   /* round id -> grant order (0: never granted) */
byte ltok[MAXACQ + 1];  /* round id -> the token answered for that lock */
byte nfix;              /* TokenOf operations started */

#define V(r, n) ((r) * NB + (n))

#ifdef MUTANT_NO_QUARANTINE
#define counts(r, n) true
#else
/* health.go quarantineLeft: counts once its window passed on this replica's clock */
#define counts(r, n) (now >= qend[V(r, n)])
#endif

inline clearkey(n) {
  val[n] = 0; kexp[n] = 0; note[n] = 0; tok[n] = 0
}

/* health.go observe: what a replica learns reading a node's INFO (on a
 * health check, and on every new connection, so before any operation on a
 * new run). A new run_id starts a quarantine of W on this replica's clock;
 * a replica ends it only by its own clock. */
inline observe(r, n) {
  if
  :: seen[V(r, n)] != runid[n] ->
     seen[V(r, n)] = runid[n];
     qend[V(r, n)] = now + W
#ifdef MUTANT_BOOTSTRAP_ENDS_QUARANTINE
  :: seen[V(r, n)] == runid[n] && mark[n] == runid[n] && qend[V(r, n)] > now ->
     qend[V(r, n)] = now /* issue 23 B1: a marker for this run ends the quarantine */
#endif
  :: else -> skip
  fi;
  iv[V(r, n)] = (mark[n] == runid[n])
}

#define DRIFT(m) atomic { val[m] != 0 && kexp[m] == now + 1 -> clearkey(m) }
#define RESTART(m) atomic { restarts < MAXRESTART -> clearkey(m); ctr[m] = 0; mark[m] = 0; runid[m]++; rstart[m] = now; restarts++ }
#define FORGE(m) atomic { ctr[m] != 0 -> ctr[m] = 0 } :: atomic { mark[m] == 0 -> mark[m] = runid[m] }

/* ---- the environment: clock, drift, restarts, a client's forged writes ---- */
active proctype env() {
  byte n;
end_env:
  do
  :: now < MAXT -> /* Tick: the clock advances; keys whose time came expire */
     atomic {
       now++;
       n = 0;
       do
       :: n < NB -> if :: val[n] != 0 && kexp[n] <= now -> clearkey(n) :: else -> skip fi; n++
       :: else -> break
       od;
       n = 0
     }
  /* Drift: a node's clock runs fast, its key goes a tick early */
  :: DRIFT(0) :: DRIFT(1) :: DRIFT(2)
  /* restart empty: a new run_id, every key lost */
  :: RESTART(0) :: RESTART(1) :: RESTART(2)
#if RESERVED_REFUSED == 0
  /* A client writes the proxy's own bookkeeping through the proxy (issue 23 A):
   * DEL __redlock:token (A1), SET __redlock:intact <run_id> NX (A4) */
  :: FORGE(0) :: FORGE(1) :: FORGE(2)
#endif
  od
}

/* ---- a replica ---- */
proctype replica(byte r) {
  byte c, s, rid, n, i, op, nyes, nno, kq, tk, dl, k1, k2;
  byte pend[NB], tag[NB], rep[NB];
  bool hop[NB];
  byte rv[NB], rr[NB], rt[NB], re[NB];

/* send op to every node: on a new connection the replica reads the node's
 * identity first (observe); hop: it could not count when sent (round.go start) */
#define SEND(counting) \
  n = 0; \
  do \
  :: n < NB -> observe(r, n); tag[n] = runid[n]; pend[n] = 1; rep[n] = NONE; \
       hop[n] = (counting && !counts(r, n)); n++ \
  :: else -> break \
  od; n = 0

/* a node runs a pending operation (one script, atomically), or the request
 * or its reply is lost; a request sent to an earlier run of the node fails
 * (the connection broke with the restart) */
#define LAND(m) \
  atomic { pend[m] == 1 -> pend[m] = 0; \
    if \
    :: tag[m] == runid[m] -> EXEC(m) \
    :: true -> rep[m] = FAILED          /* the request (or the node) is lost */ \
    fi }

/* a round that reaches every node at the same instant, each may be lost */
#define ALLNOW \
  atomic { n = 0; \
    do \
    :: n < NB -> pend[n] = 0; \
       if :: tag[n] == runid[n] -> EXEC(n) :: true -> rep[n] = FAILED fi; n++ \
    :: else -> break \
    od; n = 0 }

#define NPEND (pend[0] + pend[1] + pend[2])

/* collect (round.go): answers land until the round is decided, or the
 * deadline passes (any moment); then every node not in counts as failed */
#define COLLECT(decided) \
  do \
  :: LAND(0) :: LAND(1) :: LAND(2) \
  :: decided -> break \
  :: true -> break /* the deadline */ \
  od

/* drain: wait for every node's answer (or its loss) */
#define DRAIN \
  do \
  :: LAND(0) :: LAND(1) :: LAND(2) \
  :: NPEND == 0 -> break \
  od

#define RESET \
  atomic { c = 0; s = 0; rid = 0; n = 0; i = 0; op = 0; nyes = 0; nno = 0; kq = 0; tk = 0; dl = 0; k1 = 0; k2 = 0; \
    i = 0; do :: i < NB -> pend[i] = 0; tag[i] = 0; rep[i] = 0; hop[i] = 0; rv[i] = 0; rr[i] = 0; rt[i] = 0; re[i] = 0; i++ \
    :: else -> break od; i = 0 }

/* EXEC(m): what node m does for op, atomically (backend/scripts/*.lua) */
#define EXEC(m) \
  if \
  :: op == OP_ACQUIRE -> /* acquire.lua: SET NX PX t', note the round */ \
     if \
     :: val[m] == 0 -> val[m] = c; kexp[m] = now + TTLP; note[m] = rid; tok[m] = 0; \
        if :: hop[m] || !counts(r, m) -> rep[m] = QUAR :: else -> rep[m] = YES fi \
     :: else -> rep[m] = NO \
     fi \
  :: op == OP_UNDO -> /* undo.lua: delete only what this round wrote */ \
     if \
     :: val[m] == c && UNDO_MATCH(m) -> clearkey(m); rep[m] = YES \
     :: else -> rep[m] = NO \
     fi \
  :: op == OP_DELIFEQ -> /* delifeq.lua */ \
     if \
     :: val[m] == c -> clearkey(m); rep[m] = YES \
     :: else -> rep[m] = NO \
     fi \
  :: op == OP_EXTEND -> /* pexpireifeq.lua: only while the holder's window is open there */ \
     if \
     :: val[m] == c && kexp[m] - now > PAD -> kexp[m] = now + TTLP; \
        if :: hop[m] || !counts(r, m) -> rep[m] = QUAR :: else -> rep[m] = YES fi \
     :: else -> rep[m] = NO \
     fi \
  :: op == OP_READ -> rv[m] = val[m]; rr[m] = note[m]; rt[m] = tok[m]; re[m] = kexp[m]; rep[m] = YES \
  :: op == OP_CTR -> rt[m] = ctr[m]; rep[m] = YES \
  :: op == OP_RAISE -> /* raise.lua: raise the counter; note the token beside the lock */ \
     if :: ctr[m] < tk -> ctr[m] = tk :: else -> skip fi; \
     rt[m] = 0; \
     if \
     :: val[m] == c && note[m] == rid -> NOTE_TOKEN(m) \
     :: else \
     fi; \
     rep[m] = YES \
  fi

#ifdef MUTANT_NO_ROLLBACK_ID_CHECK
#define UNDO_MATCH(m) true
#else
#define UNDO_MATCH(m) (note[m] == rid)
#endif

#ifdef MUTANT_TOKEN_PER_REPLICA
/* issue 23 C: raise.lua notes max(noted, token); each replica answers its own */
#define NOTE_TOKEN(m) if :: tok[m] < tk -> tok[m] = tk :: else -> skip fi; rt[m] = tk
#else
/* the fix: the first token noted beside a lock wins; a node answers the one it keeps */
#define NOTE_TOKEN(m) if :: tok[m] == 0 -> tok[m] = tk :: else -> skip fi; rt[m] = tok[m]
#endif

/* counting votes */
#define TALLY \
  nyes = 0; nno = 0; i = 0; \
  do \
  :: i < NB -> if :: rep[i] == YES -> nyes++ :: rep[i] == NO -> nno++ :: else -> skip fi; i++ \
  :: else -> break \
  od; i = 0

/* I1: no other client is inside its window when c's OK is written */
#define CHECK_I1 \
  i = 1; \
  do \
  :: i <= 2 -> assert(i == c || hend[i] <= now); i++ \
  :: else -> break \
  od; i = 0

/* I2: one lock (round id k1) has one token tk, and tokens follow grant order */
#define CHECK_I2 \
  assert(ltok[k1] == 0 || ltok[k1] == tk); \
  ltok[k1] = tk; \
  i = 1; \
  do \
  :: i <= MAXACQ -> \
     if \
     :: i != k1 && ltok[i] != 0 && gof[i] != 0 && gof[k1] != 0 -> \
        assert(gof[i] < gof[k1] && ltok[i] < tk || gof[i] > gof[k1] && ltok[i] > tk) \
     :: else \
     fi; i++ \
  :: else -> break \
  od; i = 0

/* tendCounters / repair (fencing.go): a node out of quarantine on this
 * replica, without its run's marker, is raised to the largest counter of
 * N-Q+1 intact others and then marked */
#define REPAIR(m) \
  atomic { seen[V(r, m)] == runid[m] && mark[m] != runid[m] && counts(r, m) && \
           mark[(m + 1) % NB] == runid[(m + 1) % NB] && mark[(m + 2) % NB] == runid[(m + 2) % NB] -> \
    if :: ctr[m] < ctr[(m + 1) % NB] -> ctr[m] = ctr[(m + 1) % NB] :: else -> skip fi; \
    if :: ctr[m] < ctr[(m + 2) % NB] -> ctr[m] = ctr[(m + 2) % NB] :: else -> skip fi; \
    mark[m] = runid[m]; iv[V(r, m)] = true }

#define YESCNT ((rep[0] == YES -> 1 : 0) + (rep[1] == YES -> 1 : 0) + (rep[2] == YES -> 1 : 0))
#define OPEN ((pend[0] && !hop[0] -> 1 : 0) + (pend[1] && !hop[1] -> 1 : 0) + (pend[2] && !hop[2] -> 1 : 0))

#ifdef MUTANT_BOOTSTRAP_ENDS_QUARANTINE
#define NEWS(m) (seen[V(r, m)] != runid[m] || iv[V(r, m)] != (mark[m] == runid[m]) || mark[m] == runid[m] && qend[V(r, m)] > now)
#else
#define NEWS(m) (seen[V(r, m)] != runid[m] || iv[V(r, m)] != (mark[m] == runid[m]))
#endif
/* a health check, when it has something new to read */
#define CHECK(m) atomic { NEWS(m) -> n = 0; observe(r, m) }

end_idle:
  do
  /* ---- Acquire (acquire.go acquire): SET k c NX PX TTL from client c ---- */
  :: atomic { nextrid < MAXACQ -> nextrid++; rid = nextrid; select(c : 1 .. 2); s = now; op = OP_ACQUIRE; SEND(true) }
     COLLECT(YESCNT >= Q || YESCNT + OPEN < Q);
     atomic {
       TALLY;
       if
       :: nyes >= Q && now < s + TTL -> /* verdict: Q counting votes, validity left (checked again at the reply) */
          CHECK_I1;
          hend[c] = s + TTL;
          ngrant++; gof[rid] = ngrant
       :: else -> op = OP_UNDO /* failed: drain, then Rollback */
       fi
     }
     if
     :: op == OP_UNDO ->
        /* pending acquires land or are lost first (drain) ... */
        op = OP_ACQUIRE; DRAIN;
        /* ... then the rollback (undo.lua) on every node it may have written:
         * not those that said no */
        atomic {
          op = OP_UNDO; n = 0;
          do
          :: n < NB -> if :: rep[n] != NO -> pend[n] = 1; tag[n] = runid[n] :: else -> skip fi; n++
          :: else -> break
          od; n = 0
        }
        DRAIN
     :: else -> DRAIN /* the stragglers land after the grant (finish) */
     fi;
     RESET

  /* ---- Release (release.go): the client stops using the lock, then compare-and-delete ---- */
  :: atomic { select(c : 1 .. 2); hend[c] = 0; op = OP_DELIFEQ; SEND(false); ALLNOW; RESET }

  /* ---- Extend (acquire.go extend): compare-and-PEXPIRE from client c ---- */
  :: atomic {
       select(c : 1 .. 2); s = now; op = OP_EXTEND; SEND(true); ALLNOW;
       TALLY;
       if
       :: nyes >= Q && now < s + TTL -> CHECK_I1; if :: hend[c] < s + TTL -> hend[c] = s + TTL :: else -> skip fi
       :: else -> skip
       fi;
       RESET
     }

  /* ---- TokenOf (tokenfix.go): the first read of a plain lock's token.
   * Phase 1 (read by quorum, read the counters) and phase 2 (raise and
   * note) are each one step; another fixer may run between them. ---- */
  :: atomic {
       nfix < MAXFIX -> nfix++; op = OP_READ; SEND(false); ALLNOW;
       /* the lock a quorum holds: its value c and round k1 */
       k1 = 0; n = 0;
       do
       :: n < NB ->
          if
          :: rep[n] == YES && rv[n] != 0 && k1 == 0 ->
             kq = 0; i = 0;
             do
             :: i < NB -> if :: rep[i] == YES && rv[i] == rv[n] && rr[i] == rr[n] -> kq++ :: else -> skip fi; i++
             :: else -> break
             od;
             if :: kq >= Q -> k1 = rr[n]; c = rv[n] :: else -> skip fi
          :: else -> skip
          fi; n++
       :: else -> break
       od;
       n = 0; i = 0; tk = 0;
       if
       :: k1 != 0 ->
          /* its token, if Q of its holders noted the same one */
          n = 0;
          do
          :: n < NB ->
             if
             :: rep[n] == YES && rv[n] == c && rr[n] == k1 && rt[n] != 0 ->
                kq = 0; i = 0;
                do
                :: i < NB -> if :: rep[i] == YES && rv[i] == c && rr[i] == k1 && rt[i] == rt[n] -> kq++ :: else -> skip fi; i++
                :: else -> break
                od;
                if :: kq >= Q -> tk = rt[n] :: else -> skip fi
             :: else -> skip
             fi; n++
          :: else -> break
          od;
          /* the deadline: before the lock can expire on a holder, drift (one
           * tick early) included: the Q-th (Q = 2) largest expiry among the
           * holders that answered */
          k2 = 0; dl = 0; i = 0;
          do
          :: i < NB ->
             if
             :: rep[i] == YES && rv[i] == c && rr[i] == k1 ->
                if
                :: re[i] >= k2 -> dl = k2; k2 = re[i]
                :: re[i] < k2 && re[i] > dl -> dl = re[i]
                :: else -> skip
                fi
             :: else -> skip
             fi; i++
          :: else -> break
          od;
          k2 = 0; n = 0; i = 0
       :: else -> skip
       fi;
       if
       :: k1 == 0 -> RESET /* no lock held by a quorum */
       :: k1 != 0 && tk != 0 -> CHECK_I2; RESET /* noted already */
       :: k1 != 0 && tk == 0 ->
          /* fixToken: read the counters of a quorum of intact nodes */
          rid = k1; op = OP_CTR; SEND(false); ALLNOW;
          kq = 0; n = 0;
          do
          :: n < NB -> if :: rep[n] == YES && iv[V(r, n)] -> kq++; if :: rt[n] > tk -> tk = rt[n] :: else -> skip fi :: else -> skip fi; n++
          :: else -> break
          od;
          n = 0; tk++;
          if
          :: kq >= Q && now + 1 < dl -> op = OP_RAISE; i = 0;
             do
             :: i < NB -> rep[i] = 0; rv[i] = 0; rr[i] = 0; rt[i] = 0; re[i] = 0; tag[i] = 0; i++
             :: else -> break
             od; i = 0; kq = 0
          :: else -> RESET
          fi
       fi
     }
     if
     :: op == OP_RAISE ->
        atomic {
          /* raise Q intact counters to tk and note it beside the lock on Q holders */
          SEND(false); ALLNOW;
          kq = 0; n = 0;
          do
          :: n < NB -> if :: rep[n] == YES && iv[V(r, n)] -> kq++ :: else -> skip fi; n++
          :: else -> break
          od;
          n = 0;
#ifdef MUTANT_TOKEN_PER_REPLICA
          k2 = 0; i = 0;
          do
          :: i < NB -> if :: rep[i] == YES && rt[i] == tk -> k2++ :: else -> skip fi; i++
          :: else -> break
          od; i = 0;
          if :: k2 < Q -> tk = 0 :: else -> skip fi;
#else
          /* the token Q holders keep: this one, or a faster fixer's */
          n = 0; k2 = 0;
          do
          :: n < NB && k2 == 0 ->
             if
             :: rep[n] == YES && rt[n] != 0 ->
                i = 0; nno = 0;
                do
                :: i < NB -> if :: rep[i] == YES && rt[i] == rt[n] -> nno++ :: else -> skip fi; i++
                :: else -> break
                od;
                if :: nno >= Q -> k2 = rt[n] :: else -> skip fi
             :: else -> skip
             fi; n++
          :: else -> break
          od;
          tk = k2; n = 0; i = 0; nno = 0;
#endif
          if
#ifdef MUTANT_NO_TOKEN_DEADLINE
          :: kq >= Q && tk != 0 -> CHECK_I2
#else
          :: kq >= Q && tk != 0 && now + 1 < dl -> CHECK_I2
#endif
          :: else -> skip
          fi;
          RESET
        }
     :: else -> skip
     fi

  /* ---- a health check (monitor.go check, health.go observe) ---- */
  :: CHECK(0) :: CHECK(1) :: CHECK(2)

  /* ---- tendCounters / repair (fencing.go) ---- */
  :: REPAIR(0) :: REPAIR(1) :: REPAIR(2)

  /* ---- bootstrap (fencing.go, initial_cluster_state: new), once per replica ---- */
  :: atomic {
       !booted[r] -> booted[r] = true;
#ifdef MUTANT_BOOTSTRAP_ENDS_QUARANTINE
       /* issue 23 B1: marked nodes are skipped (another replica's
        * bootstrap), the young unmarked ones marked and let vote at once */
       k1 = 1; n = 0;
       do
       :: n < NB -> if :: mark[n] != 0 && mark[n] != runid[n] || now >= rstart[n] + W -> k1 = 0 :: else -> skip fi; n++
       :: else -> break
       od;
       n = 0;
       do
       :: k1 && n < NB ->
          if :: mark[n] != runid[n] -> mark[n] = runid[n]; iv[V(r, n)] = true; qend[V(r, n)] = now :: else -> skip fi; n++
       :: else -> break
       od;
#else
       /* the fix: a deployment marked once is never bootstrapped again */
       k1 = 1; n = 0;
       do
       :: n < NB -> if :: mark[n] != 0 || now >= rstart[n] + W -> k1 = 0 :: else -> skip fi; n++
       :: else -> break
       od;
       n = 0;
       do
       :: k1 && n < NB -> mark[n] = runid[n]; iv[V(r, n)] = true; qend[V(r, n)] = now; n++
       :: else -> break
       od;
#endif
       n = 0; k1 = 0
     }
  od
}

init {
  byte n;
  atomic {
    /* an established deployment: every node on run 1, marked, seen by both
     * replicas, out of quarantine */
    do
    :: n < NB -> runid[n] = 1; mark[n] = 1; seen[V(0, n)] = 1; seen[V(1, n)] = 1; iv[V(0, n)] = true; iv[V(1, n)] = true; n++
    :: else -> break
    od;
    run replica(0);
    run replica(1)
  }
}
