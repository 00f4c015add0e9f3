/*
 * tokens.pml: fencing tokens of redlock-proxy's string locks
 * (quorum/fencing.go fence, raise, tendCounters, repair; tokenfix.go TokenOf,
 * fixToken, leading; read.go majorityEntry; backend/scripts acquire.lua
 * (fenced branch), raise.lua, repair.lua). README.md maps each step to the
 * code; tokens_test.go runs it.
 *
 * One key, NB = 3 backends (Q = 2), NR = 2 proxy replicas. Each grant round g
 * (1..NG) is its own client and lock value (value = round = g), so a node's
 * lock copy names the round that wrote it. Each backend keeps the shared
 * token counter (TokenKey) ctr[], its writer wr[] (WriterKey), the intact
 * marker (mark[] == runid[]), and the lock with its note: round, kind
 * (fenced "<round> <pad> <token>" or fixed "<round> <pad> =<token>") and token.
 *
 * Time is abstract: a round's window ends (over[g]) at any moment after it
 * started (its TTL ran out, or it failed and rolls back); a node's copy of
 * a lock disappears (expiry or undo) at any moment after its window ended,
 * never before (the padding: mutex.pml checks that). A fence or a token fix
 * answers only while its lock's window is open (fence's validity check,
 * fixToken's deadline), atomically with that check.
 *
 * A backend may restart empty (MAXRESTART = 1): it loses the lock, its note,
 * its counter and its marker. It is quarantined (counts() false) until every
 * window open at its restart has ended, and its counters are not intact
 * until a repair (tendCounters) marks it. Requests sent to the old run fail.
 * Each backend script is one atomic step. An acquire request lands in time
 * (counted), runs without its answer arriving, or never runs; a raise
 * request also may land late (after the grant was handed out).
 */

#define NB 3
#define Q 2
#define NR 2
#ifndef NG
#define NG 3 /* rounds in the run */
#endif
#ifndef MAXRESTART
#define MAXRESTART 1
#endif

#define PEND 0
#define YES 1
#define FAILED 3

#define K_FENCED 1 /* acquire.lua fenced note "<round> <pad> <token>" */
#define K_FIXED 2  /* raise.lua "fix": "<round> <pad> =<token>" */

/* ---- backends ---- */
byte val[NB];   /* the lock's value = the round that wrote it, 0: absent */
byte nkind[NB]; /* its note: 0 plain "<round> <pad>", K_FENCED, K_FIXED */
byte ntok[NB];  /* the token noted or fixed beside it, 0: none */
bool tent[NB];  /* the fenced token is tentative (the acquire's counter, or a first raise's), not made final */
byte ctr[NB];   /* TokenKey */
byte wr[NB];    /* WriterKey(TokenKey): the round that last wrote ctr */
byte runid[NB] = 1;
byte mark[NB] = 1; /* IntactKey: the run it was marked on (bootstrap marked all) */
byte qmask[NB];    /* rounds whose windows were open at its restart */
byte restarts;

/* ---- rounds ---- */
bool started[NG + 1];
bool over[NG + 1];   /* the round's window ended (TTL spent, or failed) */
byte rdone;          /* TokenOf processes ended */
bool fin[NG + 1];    /* its process ended (SEQ: the next round waits for it) */

/* ---- the checker's bookkeeping ---- */
byte tokOf[NG + 1]; /* the token answered for round g's lock (handed out, fixed or read) */
byte top;           /* the largest token answered so far */

#define BIT(g) (1 << (g))
#define LIVEMASK ((started[1] && !over[1] -> BIT(1) : 0) | (started[2] && !over[2] -> BIT(2) : 0) | (started[3] && !over[3] -> BIT(3) : 0))
#define intact(n) (mark[n] == runid[n])
#define counts(n) ((qmask[n] & LIVEMASK) == 0) /* health.go counts: the quarantine */

/* ANSWER: token t is answered for lock g. One lock has one token (I2); a
 * lock's first token is above every token answered before (I1: grants of
 * the key are sequential, each starts after the window before it ended). */
#define ANSWER(g, t) \
  assert(t > 0); \
  if \
  :: tokOf[g] != 0 -> assert(tokOf[g] == t) /* I2 */ \
  :: else -> assert(t > top); tokOf[g] = t; top = t /* I1 */ \
  fi

/* ---- the environment ---- */
#define ENDWIN(g) :: atomic { started[g] && !over[g] -> over[g] = true }
#define EXPIRE(m) :: atomic { val[m] != 0 && over[val[m]] -> val[m] = 0; nkind[m] = 0; ntok[m] = 0; tent[m] = false }
#define RESTART(m) \
  :: atomic { restarts < MAXRESTART -> val[m] = 0; nkind[m] = 0; ntok[m] = 0; tent[m] = false; ctr[m] = 0; wr[m] = 0; \
       mark[m] = 0; runid[m]++; qmask[m] = LIVEMASK; restarts++ }

active proctype env() {
end_env:
  do
  ENDWIN(1) ENDWIN(2) ENDWIN(3)
  EXPIRE(0) EXPIRE(1) EXPIRE(2)
#ifdef WITH_RESTART
  RESTART(0) /* the nodes are symmetric but for the order TAKE reads them in: node 0 restarts */
#endif
  od
}

/* fencing.go tendCounters + repair (repair.lua): a node without its run's
 * marker that counts (out of quarantine) is repaired from the recordReaders()
 * = 2 other nodes, both intact: its counter raised to the largest of theirs
 * (read first, written by a later script), then marked. */
#define OTHER1(m) ((m + 1) % NB)
#define OTHER2(m) ((m + 2) % NB)
#ifdef MUTANT_NO_REPAIR_RAISE
#define REPAIRCTR(m) skip /* marked intact with its counter lost */
#else
#define REPAIRCTR(m) if :: ctr[m] < merged -> ctr[m] = merged :: else -> skip fi
#endif
proctype tendCounters() {
  byte m, merged, tag;
end_tend:
  do
  :: atomic { !intact(0) && counts(0) -> m = 0 }
     goto rd
  :: atomic { !intact(1) && counts(1) -> m = 1 }
     goto rd
  :: atomic { !intact(2) && counts(2) -> m = 2 }
rd:  atomic {
       if
       :: intact(OTHER1(m)) && intact(OTHER2(m)) && !intact(m) ->
          merged = (ctr[OTHER1(m)] > ctr[OTHER2(m)] -> ctr[OTHER1(m)] : ctr[OTHER2(m)]); tag = runid[m]
       :: else -> tag = 0
       fi
     }
     atomic { /* Engine.repair: repair.lua on the run it read (a newer run refuses the mark) */
       if
       :: tag != 0 && tag == runid[m] -> REPAIRCTR(m); mark[m] = tag
       :: else -> skip
       fi;
       m = 0; merged = 0; tag = 0
     }
  od
}

/* ---- a fenced acquire: acquire.go Engine.acquire with Aux = TokenKey ---- */

/* acquire.lua, fenced: SET NX, INCR, the note "<round> <pad> ?<counter>" (tentative), writer */
#define ACQ_LUA(m) \
  if \
  :: val[m] == 0 -> val[m] = g; nkind[m] = K_FENCED; ctr[m]++; ntok[m] = ctr[m]; tent[m] = true; wr[m] = g; ans = ctr[m] \
  :: else -> ans = 0 \
  fi

/* a request lands in time (answer counted), runs unanswered, or never runs */
#define ACQ_SEND(m) \
  if \
  :: ans = 0; ACQ_LUA(m); if :: ans > 0 && counts(m) -> yes[m] = true; rtok[m] = ans; it[m] = intact(m) :: else -> skip fi \
  :: ans = 0; ACQ_LUA(m) \
  :: skip \
  fi; ans = 0

/* raise.lua, no fix: raise ctr to tok, note the writer; note the token
 * beside the lock where round g holds it and its note is fenced: a first
 * raise (fm) tentative where none or a tentative one is noted; a last raise (the outbid
 * second, or the confirmation) final over none, a tentative one, or the
 * same token */
#ifdef MUTANT_NO_TENTATIVE
#define RAISE_NOTE(m) if :: ntok[m] < tok || tent[m] -> ntok[m] = tok; tent[m] = false :: else -> skip fi; noted = true
#else
#define RAISE_NOTE(m) \
  if \
  :: fm -> if :: ntok[m] == 0 || tent[m] -> ntok[m] = tok; tent[m] = true :: else -> skip fi; noted = true \
  :: !fm && (tent[m] || ntok[m] == 0 || ntok[m] == tok) -> ntok[m] = tok; tent[m] = false; noted = true \
  :: else -> skip \
  fi
#endif
#define RAISE_LUA(m) \
  before = ctr[m]; own = (wr[m] == g); \
  if :: ctr[m] < tok -> ctr[m] = tok; wr[m] = g :: else -> skip fi; \
  noted = false; \
  if \
  :: val[m] == g && nkind[m] == K_FENCED -> RAISE_NOTE(m) \
  :: else -> skip \
  fi

/* fencing.go raise: in time (counted: a yes from an intact node), run
 * unanswered, late (lands after, pend), or never */
#define RAISE_SEND(m) \
  if \
  :: RAISE_LUA(m); \
     if \
     :: intact(m) -> raised++; if :: noted -> nnoted++ :: else -> skip fi; \
        if :: !own && before > above -> above = before :: else -> skip fi \
     :: else -> if :: noted -> nnoted++ :: else -> skip fi \
     fi \
  :: RAISE_LUA(m) \
  :: pend[m] = tok; pfm[m] = fm; tag[m] = runid[m] \
  :: skip \
  fi

/* The confirmation of a first raise that was not outbid (fencing.go fence:
 * a last raise of the same token, sent unawaited once the grant passed its
 * validity check, and sent again where it failed): lands on each node at
 * once or never. (Landing later only delays when one reader finds the token
 * final there; a tentative token is no token to a reader either way.) */
#define CONFIRM(m) if :: RAISE_LUA(m) :: skip fi

#define LAND(m) \
  :: atomic { pend[m] != 0 -> \
       if :: tag[m] == runid[m] -> tok = pend[m]; fm = pfm[m]; RAISE_LUA(m) :: else -> skip fi; pend[m] = 0 }

#ifdef MUTANT_TOKEN_ONE_NODE
/* the token is the INCR of one granting node, not the largest */
#define TAKE(m) if :: yes[m] && it[m] -> nint++; if :: tok == 0 -> tok = rtok[m] :: else -> skip fi :: else -> skip fi
#else
#define TAKE(m) if :: yes[m] && it[m] -> nint++; if :: rtok[m] > tok -> tok = rtok[m] :: else -> skip fi :: else -> skip fi
#endif

/* fencing.go oneRound: a yes from an intact node whose counter is the token */
#define EQ(m) if :: yes[m] && it[m] && rtok[m] == tok -> neq++ :: else -> skip fi
#ifdef MUTANT_ONE_ROUND_ANY
#define ONEROUND (nint >= Q) /* any grant of Q intact nodes skips its raise */
#else
#define ONEROUND (neq >= Q)
#endif

proctype AcquireFenced(byte g) {
  byte ans, tok, nint, neq, before, raised, nnoted, above, i;
  bool own, noted, first = true, fm;
  bool yes[NB], it[NB], pfm[NB];
  byte rtok[NB], pend[NB], tag[NB];
#if defined(SCEN_FIX)
  over[g - 1] && rdone == 2; /* once the plain lock's window ended (it could not win
    before) and its readers ended (after that they only refuse) */
#elif defined(SEQ)
  (g == 1 || fin[g - 1]); /* the grants run one after another */
#endif
  /* startTimed + collect + verdict: Q counting yes votes, window open */
  atomic { started[g] = true; ACQ_SEND(0); ACQ_SEND(1); ACQ_SEND(2) }
  atomic {
    nint = (yes[0] -> 1 : 0) + (yes[1] -> 1 : 0) + (yes[2] -> 1 : 0);
    if
    :: nint >= Q && !over[g] -> /* fence: the largest counter among intact granting nodes */
       nint = 0; TAKE(0); TAKE(1); TAKE(2);
       if :: nint < Q -> goto fail :: else -> skip fi;
       neq = 0; EQ(0); EQ(1); EQ(2)
    :: else -> goto fail
    fi;
    yes[0] = 0; yes[1] = 0; yes[2] = 0; it[0] = 0; it[1] = 0; it[2] = 0;
    rtok[0] = 0; rtok[1] = 0; rtok[2] = 0;
    if :: ONEROUND -> nint = 0; neq = 0; goto answer :: else -> skip fi;
    nint = 0; neq = 0
  }
raise: /* raise: one round to every node, the validity checked first */
  atomic {
    if :: over[g] -> goto fail :: else -> skip fi;
    raised = 0; nnoted = 0; above = tok - 1; fm = first;
    RAISE_SEND(0); RAISE_SEND(1); RAISE_SEND(2);
    before = 0; own = 0; noted = 0;
    if :: raised < Q || nnoted < Q -> goto fail :: else -> skip fi;
#ifndef MUTANT_NO_OUTBID
    if
    :: first && above >= tok -> tok = above + 1; first = false; above = 0; goto raise
    :: else -> skip
    fi;
#endif
    above = 0; raised = 0; nnoted = 0
  }
answer:
  atomic { /* the validity left is checked again: the grant and its token */
    if
    :: !over[g] -> ANSWER(g, tok);
       if :: !first -> skip :: first -> fm = false; CONFIRM(0); CONFIRM(1); CONFIRM(2); before = 0; own = 0; noted = 0 fi
    :: else -> goto fail
    fi
  }
  goto drain;
fail:
  over[g] = true; /* rollback: its copies go */
drain: /* finish / drain: late raises land or are lost */
  do
  LAND(0) LAND(1) LAND(2)
  :: atomic { pend[0] == 0 && pend[1] == 0 && pend[2] == 0 -> break }
  od;
  fin[g] = true
}

/* ---- a plain acquire (acquire.go Engine.acquire, no Aux): no counter, note "<round> <pad>" ---- */
#define PACQ_SEND(m) \
  if \
  :: val[m] == 0 -> val[m] = g; nkind[m] = 0; ntok[m] = 0; if :: counts(m) -> nyes++ :: else -> skip fi \
  :: val[m] == 0 -> val[m] = g; nkind[m] = 0; ntok[m] = 0 \
  :: skip \
  fi

proctype AcquirePlain(byte g) {
  byte nyes;
  atomic {
    started[g] = true; PACQ_SEND(0); PACQ_SEND(1); PACQ_SEND(2);
    if :: nyes >= Q && !over[g] -> skip :: else -> over[g] = true fi; nyes = 0;
    fin[g] = true
  }
}

/* ---- TokenOf (tokenfix.go) of round g's lock, through one replica ---- */

/* read.go majorityEntry over the nodes answering in time: found when Q of
 * them hold g's lock; a fenced token counts only when Q holders note it
 * final, or tentative beside the same token final on another holder (a
 * tentative one alone reads as none: getpttl.lua, tokenpart.lua); a fixed
 * token counts only when Q holders fixed it */
#ifdef MUTANT_READ_TENTATIVE
#define TENT(m) false
#else
#define TENT(m) tent[m] /* no token until a last raise makes one final */
#endif
#define READ1(m) \
  if \
  :: val[m] == g -> hold++; \
     if \
     :: nkind[m] == K_FENCED && ntok[m] == 0 -> fenced = true \
     :: nkind[m] == K_FENCED && ntok[m] != 0 && TENT(m) -> fenced = true \
     :: nkind[m] == K_FENCED && ntok[m] != 0 && !TENT(m) && (ft1 == 0 || ft1 == ntok[m]) -> fenced = true; ft1 = ntok[m]; e1++ \
     :: nkind[m] == K_FENCED && ntok[m] != 0 && !TENT(m) && ft1 != 0 && ft1 != ntok[m] && (ft2 == 0 || ft2 == ntok[m]) -> fenced = true; ft2 = ntok[m]; e2++ \
     :: nkind[m] == K_FENCED && ntok[m] != 0 && !TENT(m) && ft1 != 0 && ft1 != ntok[m] && ft2 != 0 && ft2 != ntok[m] -> fenced = true \
     :: nkind[m] == K_FIXED && fx1 == 0 -> fx1 = ntok[m]; c1++ \
     :: nkind[m] == K_FIXED && fx1 == ntok[m] -> c1++ \
     :: nkind[m] == K_FIXED && fx1 != 0 && fx1 != ntok[m] -> fx2 = ntok[m]; c2++ \
     :: nkind[m] == 0 -> skip \
     fi \
  :: else -> skip \
  fi
#define READ1T(m) if :: rd[m] = true; READ1(m) :: rd[m] = false fi
/* a holder's tentative token counts beside the same token final (read.go tent[token]) */
#define TENTEQ(m) \
  if \
  :: rd[m] && val[m] == g && nkind[m] == K_FENCED && TENT(m) && ntok[m] != 0 && ntok[m] == ft1 -> e1++ \
  :: rd[m] && val[m] == g && nkind[m] == K_FENCED && TENT(m) && ntok[m] != 0 && ntok[m] == ft2 -> e2++ \
  :: else -> skip \
  fi; rd[m] = false
#define READ \
  hold = 0; fenced = false; ftok = 0; ft1 = 0; e1 = 0; ft2 = 0; e2 = 0; fx1 = 0; c1 = 0; fx2 = 0; c2 = 0; \
  READ1T(0); READ1T(1); READ1T(2); \
  TENTEQ(0); TENTEQ(1); TENTEQ(2); \
  if :: e1 >= Q -> ftok = ft1 :: e2 >= Q -> ftok = ft2 :: else -> skip fi; \
  if :: c2 >= Q -> fx1 = fx2; c1 = c2 :: else -> skip fi

/* raise.lua "fix": raise the counter to tok (writer: the lock's round),
 * fix tok beside the lock if it is held by round g with a plain note,
 * answer the token fixed there (tok 0: read only) */
#define FIX_LUA(m) \
  before = ctr[m]; \
  if :: ctr[m] < tok -> ctr[m] = tok; wr[m] = g :: else -> skip fi; \
  fixed = 0; \
  if \
  :: val[m] == g && nkind[m] == 0 && tok > 0 -> nkind[m] = K_FIXED; ntok[m] = tok; fixed = tok \
  :: val[m] == g && nkind[m] == K_FIXED -> fixed = ntok[m] \
  :: else -> skip \
  fi

/* fixToken's rounds: a request in time counts (its counter only from an
 * intact node), runs unanswered, or never runs */
#define FIX_SEND(m) \
  if \
  :: FIX_LUA(m); \
     if :: intact(m) -> iy++; if :: before > mx -> mx = before :: else -> skip fi :: else -> skip fi; \
     if \
     :: fixed == 0 -> skip \
     :: fixed != 0 && f1 == 0 -> f1 = fixed; k1++ \
     :: fixed != 0 && f1 == fixed -> k1++ \
     :: fixed != 0 && f1 != 0 && f1 != fixed -> f2 = fixed; k2++ \
     fi \
  :: tok > 0 -> FIX_LUA(m) /* with N 0 it writes nothing: as never */ \
  :: skip \
  fi
#define FIXROUND iy = 0; mx = 0; f1 = 0; k1 = 0; f2 = 0; k2 = 0; FIX_SEND(0); FIX_SEND(1); FIX_SEND(2)
/* leading: the token fixed on the most nodes, the larger of a tie */
#define LEADING if :: k2 > k1 || k2 == k1 && f2 > f1 -> f1 = f2; k1 = k2 :: else -> skip fi

proctype TokenOf(byte g) {
  byte hold, ftok, ft1, e1, ft2, e2, fx1, c1, fx2, c2, tok, before, fixed, iy, mx, f1, k1, f2, k2;
  bool fenced, rd[NB];
  if /* the reader reads while the lock's window is open, or not at all */
  :: atomic { started[g] && !over[g] -> skip }
  :: atomic { over[g] -> goto done }
  fi;
  atomic {
    READ;
    if
    :: hold < Q -> goto done /* not found */
    :: hold >= Q && fenced -> if :: ftok > 0 -> ANSWER(g, ftok) :: else -> skip fi; goto done
    :: hold >= Q && !fenced && c1 >= Q -> if :: !over[g] -> ANSWER(g, fx1) :: else -> skip fi; goto done /* fixedInTime */
    :: else -> skip
    fi
  }
  atomic { /* keys.lock, then read again: fixed meanwhile, or gone */
    READ;
    if
    :: hold < Q || fenced -> goto done
    :: hold >= Q && !fenced && c1 >= Q -> if :: !over[g] -> ANSWER(g, fx1) :: else -> skip fi; goto done
    :: else -> skip
    fi;
    hold = 0; fx1 = 0; c1 = 0; fx2 = 0; c2 = 0
  }
  atomic { /* fixToken, first round: counters and fixed tokens (N 0) */
    tok = 0; FIXROUND;
    if :: iy < Q -> goto done :: else -> skip fi;
    tok = mx + 1;
    LEADING; if :: k1 > 0 -> tok = f1 :: else -> skip fi
  }
  atomic { /* second round: propose tok; the token fixed on Q holders wins, in time */
    FIXROUND; LEADING;
    if
    :: k1 >= Q && !over[g] -> ANSWER(g, f1)
    :: else -> skip
    fi
  }
done:
  rdone++
}

/* fenced grants of other keys share the counter (TokenKey): each INCRs it
 * where it got its lock, and raises it. Modelled as NBUMP increments, each
 * on any node, written by a round of this key never (9): they make round
 * 1's raise outbid, as the other keys' grants do in the e2e tests. */
#ifndef NBUMP
#define NBUMP 2
#endif
proctype Bump() {
  byte k;
  do
  :: atomic { k < NBUMP -> ctr[0]++; wr[0] = 9; k++ }
  :: atomic { k < NBUMP -> ctr[1]++; wr[1] = 9; k++ }
  :: atomic { k < NBUMP -> ctr[2]++; wr[2] = 9; k++ }
  :: atomic { k == NBUMP -> break }
  od
}

init {
  atomic {
#ifdef WITH_RESTART
    run tendCounters();
#endif
#if defined(SCEN_FIX)
    /* a plain lock, its first token read on both replicas at once, then a fenced grant */
    run AcquirePlain(1); run TokenOf(1); run TokenOf(1)
#ifndef FIX_NO_GRANT
    ; run AcquireFenced(2)
#endif
#elif defined(SCEN_READ_BUMP)
    /* a fenced grant outbid by other keys' grants, and a token read of its lock */
    run AcquireFenced(1); run TokenOf(1); run Bump()
#elif defined(SCEN_READ)
    /* fenced grants, and a token read of the first one */
    run AcquireFenced(1); run TokenOf(1); run AcquireFenced(2)
#elif defined(SCEN_GRANTS_BUMP)
    /* two fenced grants, another key's grant bumping the counter on any node */
    run AcquireFenced(1); run AcquireFenced(2); run Bump()
#elif defined(SCEN_THREE)
    run AcquireFenced(1); run AcquireFenced(2); run AcquireFenced(3)
#else
    run AcquireFenced(1); run AcquireFenced(2)
#endif
  }
}
