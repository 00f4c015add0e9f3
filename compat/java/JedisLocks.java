// Lock code of a team using Jedis (5.1.5 and 4.4.8), run by hand through two proxy
// replicas (issue 12) with the library on the classpath; the library is
// not in this repository and cannot be fetched by CI (no Maven registry).
// Its traffic, recorded with cmd/wirerec, is replayed in CI from
// compat/transcripts by TestTranscripts.
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import redis.clients.jedis.*;
import redis.clients.jedis.params.SetParams;

// Lock code as a Jedis team writes it, run through two proxy replicas.
// args: hostA portA hostB portB user password mode(scenario|stress)
public class JedisLocks {
  static final String UNLOCK = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n    return 0\nend";
  static final String EXTEND = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end";
  static int checks = 0;

  static void check(String what, Object got, Object want) {
    checks++;
    if (!Objects.equals(got, want)) throw new AssertionError(what + ": got " + got + ", want " + want);
    System.out.println("ok " + what + " = " + got);
  }

  public static void main(String[] args) throws Exception {
    HostAndPort a = new HostAndPort(args[0], Integer.parseInt(args[1]));
    HostAndPort b = new HostAndPort(args[2], Integer.parseInt(args[3]));
    JedisClientConfig cfg = DefaultJedisClientConfig.builder().user(args[4]).password(args[5]).build();
    if (args[6].equals("stress")) { stress(a, b, cfg); return; }
    String key = "lock:jedis:" + args[7];
    try (Jedis ja = new Jedis(a, cfg); Jedis jb = new Jedis(b, cfg)) {
      check("acquire via A", ja.set(key, "tokA", SetParams.setParams().nx().px(30000)), "OK");
      check("contend via B", jb.set(key, "tokB", SetParams.setParams().nx().px(30000)), null);
      check("unlock by non-owner via B", jb.eval(UNLOCK, List.of(key), List.of("tokB")), 0L);
      check("GET via B", jb.get(key), "tokA");
      long pttl = jb.pttl(key);
      check("PTTL within the lease", pttl > 0 && pttl <= 30000, true);
      check("extend by owner via B", jb.eval(EXTEND, List.of(key), List.of("tokA", "20000")), 1L);
      pttl = ja.pttl(key);
      check("PTTL after extend", pttl > 0 && pttl <= 20000, true);
      check("extend by non-owner", ja.eval(EXTEND, List.of(key), List.of("tokB", "20000")), 0L);
      check("unlock by owner via A", ja.eval(UNLOCK, List.of(key), List.of("tokA")), 1L);
      check("unlock again", ja.eval(UNLOCK, List.of(key), List.of("tokA")), 0L);
      check("EXISTS after release", jb.exists(key), false);
      check("acquire via B after release", jb.set(key, "tokB", SetParams.setParams().nx().px(30000)), "OK");
      String sha = jb.scriptLoad(UNLOCK);
      check("SCRIPT LOAD sha", sha, "647c65a442733a1aa440f99908d249d13b4d6c4a");
      check("EVALSHA unlock via A", ja.evalsha(sha, List.of(key), List.of("tokB")), 1L);
      check("SET EX seconds", ja.set(key, "tokA", SetParams.setParams().nx().ex(30)), "OK");
      check("unlock", ja.eval(UNLOCK, List.of(key), List.of("tokA")), 1L);
    }
    try (JedisPool pool = new JedisPool(new JedisPoolConfig(), a, cfg)) {
      for (int i = 0; i < 3; i++) {
        try (Jedis j = pool.getResource()) {
          check("pool acquire " + i, j.set(key, "pool" + i, SetParams.setParams().px(30000).nx()), "OK");
        }
        try (Jedis j = pool.getResource()) {
          check("pool unlock " + i, j.eval(UNLOCK, List.of(key), List.of("pool" + i)), 1L);
        }
      }
    }
    try (JedisPooled jp = new JedisPooled(b, cfg)) {
      check("JedisPooled acquire", jp.set(key, "pooled", SetParams.setParams().nx().px(30000)), "OK");
      check("JedisPooled contend", jp.set(key, "other", SetParams.setParams().nx().px(30000)), null);
      check("JedisPooled unlock", jp.eval(UNLOCK, List.of(key), List.of("pooled")), 1L);
    }
    System.out.println("PASS " + checks + " checks");
  }

  static boolean refused(Runnable r) {
    try { r.run(); return false; } catch (redis.clients.jedis.exceptions.JedisDataException e) { System.out.println("  refused: " + e.getMessage()); return true; }
  }

  // stress: 8 threads over both replicas, each taking one lock 25 times; the
  // critical section checks nobody else is inside.
  static void stress(HostAndPort a, HostAndPort b, JedisClientConfig cfg) throws Exception {
    AtomicInteger inside = new AtomicInteger(), grants = new AtomicInteger(), overlaps = new AtomicInteger();
    try (JedisPool pa = new JedisPool(new JedisPoolConfig(), a, cfg); JedisPool pb = new JedisPool(new JedisPoolConfig(), b, cfg)) {
      ExecutorService ex = Executors.newFixedThreadPool(8);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        JedisPool p = t % 2 == 0 ? pa : pb; int id = t;
        fs.add(ex.submit(() -> {
          for (int n = 0; n < 25; ) {
            String tok = "t" + id + "-" + n;
            try (Jedis j = p.getResource()) {
              if (!"OK".equals(j.set("lock:stress", tok, SetParams.setParams().nx().px(10000)))) { Thread.sleep(2); continue; }
              if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
              grants.incrementAndGet();
              Thread.sleep(1);
              inside.decrementAndGet();
              if (!Long.valueOf(1).equals(j.eval(UNLOCK, List.of("lock:stress"), List.of(tok)))) throw new AssertionError("unlock of a held lock failed");
              n++;
            }
          }
          return null;
        }));
      }
      for (Future<?> f : fs) f.get();
      ex.shutdown();
    }
    System.out.println("stress: " + grants + " grants, " + overlaps + " overlaps");
    if (overlaps.get() != 0 || grants.get() != 200) throw new AssertionError("mutual exclusion broken");
    System.out.println("PASS stress");
  }
}
