// RReadWriteLock as a Redisson team uses it, run by hand (issue 26) through
// two proxy replicas, and against one plain redis-server to check that the
// program's expectations are Redis's own. The library is not in this
// repository and cannot be fetched by CI (no Maven registry); its traffic,
// recorded with cmd/wirerec, is replayed in CI from compat/transcripts by
// TestTranscripts.
import java.util.*;
import java.util.concurrent.*;
import org.redisson.Redisson;
import org.redisson.api.*;
import org.redisson.config.Config;

// args: addrA addrB tag version (3.23 or 3.52)
public class RedissonRWLocks {
  static int checks = 0;

  static void check(String what, Object got, Object want) {
    checks++;
    if (!Objects.equals(got, want)) throw new AssertionError(what + ": got " + got + ", want " + want);
    System.out.println("ok " + what + " = " + got);
  }

  static RedissonClient client(String addr, String name) {
    Config c = new Config();
    c.setLockWatchdogTimeout(6000); // renew every 2 s
    c.setUseScriptCache(false); // EVAL: the transcript carries each script's text
    c.useSingleServer().setAddress(addr).setClientName(name)
        .setConnectionMinimumIdleSize(2).setConnectionPoolSize(4)
        .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
    return Redisson.create(c);
  }

  // An actor is one thread: Redisson's locks belong to threads.
  static class Actor {
    final ExecutorService ex = Executors.newSingleThreadExecutor();
    final RReadWriteLock rw;
    Actor(RReadWriteLock rw) { this.rw = rw; }
    <T> T run(Callable<T> f) throws Exception { return ex.submit(f).get(60, TimeUnit.SECONDS); }
    <T> Future<T> start(Callable<T> f) { return ex.submit(f); }
    RLock r() { return rw.readLock(); }
    RLock w() { return rw.writeLock(); }
  }

  static boolean throwsIMSE(Callable<?> f) {
    try { f.call(); return false; } catch (IllegalMonitorStateException e) { return true; } catch (Exception e) { throw new RuntimeException(e); }
  }

  public static void main(String[] args) throws Exception {
    RedissonClient ra = client(args[0], "rw-1"), rb = client(args[1], "rw-2");
    String name = "lock:rw:" + args[2];
    boolean v352 = args[3].equals("3.52");
    try {
      Actor a1 = new Actor(ra.getReadWriteLock(name)), b1 = new Actor(rb.getReadWriteLock(name)), b2 = new Actor(rb.getReadWriteLock(name));

      // readers share
      a1.run(() -> { a1.r().lock(10, TimeUnit.SECONDS); return null; });
      check("B reads beside A", b1.run(() -> b1.r().tryLock(0, 10, TimeUnit.SECONDS)), true);
      check("read lock isLocked via B", b1.r().isLocked(), true);
      check("write lock isLocked via A", a1.w().isLocked(), false);
      check("a writer on B is refused while readers hold", b2.run(() -> b2.w().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("A re-enters its read lock", a1.run(() -> { a1.r().lock(10, TimeUnit.SECONDS); return a1.r().getHoldCount(); }), 2);
      check("A's hold count after one unlock", a1.run(() -> { a1.r().unlock(); return a1.r().getHoldCount(); }), 1);
      check("A's read isHeldByCurrentThread", a1.run(() -> a1.r().isHeldByCurrentThread()), true);

      // a writer on B waits, and is woken when the last reader leaves
      Future<Boolean> writer = b2.start(() -> b2.w().tryLock(20, 10, TimeUnit.SECONDS));
      Thread.sleep(1000);
      a1.run(() -> { a1.r().unlock(); return null; });
      Thread.sleep(300);
      check("the writer still waits for B's reader", writer.isDone(), false);
      long t0 = System.nanoTime();
      b1.run(() -> { b1.r().unlock(); return null; });
      check("the waiting writer got the lock", writer.get(30, TimeUnit.SECONDS), true);
      long waited = (System.nanoTime() - t0) / 1_000_000;
      check("the writer was woken by the unlock, not a lease (" + waited + " ms)", waited < 3000, true);

      // a writer excludes readers and other writers
      check("write lock isLocked via A", a1.w().isLocked(), true);
      check("A cannot read while B writes", a1.run(() -> a1.r().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("A cannot write while B writes", a1.run(() -> a1.w().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("another thread of B cannot read either", b1.run(() -> b1.r().tryLock(0, 10, TimeUnit.SECONDS)), false);

      // the writer takes the read lock too, then gives up writing: it still reads
      check("the writer reads", b2.run(() -> b2.r().tryLock(0, 10, TimeUnit.SECONDS)), true);
      b2.run(() -> { b2.w().unlock(); return null; });
      check("write lock free after the writer's unlock", a1.w().isLocked(), false);
      check("read lock held by the former writer", a1.r().isLocked(), true);
      check("A cannot write beside B's read", a1.run(() -> a1.w().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("A reads beside B", a1.run(() -> a1.r().tryLock(0, 10, TimeUnit.SECONDS)), true);
      a1.run(() -> { a1.r().unlock(); return null; });
      b2.run(() -> { b2.r().unlock(); return null; });
      check("free: read lock", a1.r().isLocked(), false);
      check("free: write lock", b1.w().isLocked(), false);
      // 3.23 answers an unlock of a free read-write lock 1 (no error); 3.52 nil
      check("unlock of a free read lock throws", a1.run(() -> throwsIMSE(() -> { a1.r().unlock(); return null; })), v352);

      // write re-entry and the watchdog
      check("A writes twice", a1.run(() -> { a1.w().lock(); a1.w().lock(); return a1.w().getHoldCount(); }), 2);
      a1.run(() -> { a1.w().unlock(); return null; });
      check("still written after one unlock", b1.w().isLocked(), true);
      Thread.sleep(8000);
      long ttl = a1.run(() -> a1.w().remainTimeToLive());
      check("the watchdog renewed the write lock (pttl " + ttl + ")", ttl > 2000 && ttl <= 6000, true);
      check("B cannot read", b1.run(() -> b1.r().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("forceUnlock of the write lock via B", b1.w().forceUnlock(), true);
      check("free after forceUnlock", a1.w().isLocked(), false);
      a1.run(() -> { throwsIMSE(() -> { a1.w().unlock(); return null; }); return null; }); // stops A's watchdog

      // read lock with the watchdog
      a1.run(() -> { a1.r().lock(); return null; });
      Thread.sleep(8000);
      check("the watchdog kept the read lock: B cannot write", b2.run(() -> b2.w().tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("forceUnlock of the read lock via B", b1.r().forceUnlock(), true);
      check("B writes after the forceUnlock", b2.run(() -> { boolean ok = b2.w().tryLock(0, 10, TimeUnit.SECONDS); b2.w().unlock(); return ok; }), true);
      a1.run(() -> { throwsIMSE(() -> { a1.r().unlock(); return null; }); return null; });
      for (Actor a : new Actor[] {a1, b1, b2}) a.ex.shutdown();
    } finally {
      ra.shutdown();
      rb.shutdown();
    }
    System.out.println("PASS " + checks + " checks");
  }
}
