// Lock code of a team using Redisson 3.23.4, run by hand through two proxy
// replicas (issue 12) with the library on the classpath; the library is
// not in this repository and cannot be fetched by CI (no Maven registry).
// Its traffic, recorded with cmd/wirerec, is replayed in CI from
// compat/transcripts by TestTranscripts.
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.redisson.Redisson;
import org.redisson.api.*;
import org.redisson.config.Config;

// RLock and RFencedLock as a Redisson team uses them, through two proxy replicas.
// args: addrA addrB user password tag [prefixUser prefixPassword]
public class RedissonLocks {
  static int checks = 0;

  static void check(String what, Object got, Object want) {
    checks++;
    if (!Objects.equals(got, want)) throw new AssertionError(what + ": got " + got + ", want " + want);
    System.out.println("ok " + what + " = " + got);
  }

  static RedissonClient client(String addr, String user, String pass) {
    Config c = new Config();
    c.setLockWatchdogTimeout(6000); // renew every 2 s
    c.useSingleServer().setAddress(addr).setUsername(user).setPassword(pass)
        .setConnectionMinimumIdleSize(2).setConnectionPoolSize(4)
        .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
    return Redisson.create(c);
  }

  // on runs f on a thread of its own (Redisson locks belong to threads).
  static <T> T on(Callable<T> f) throws Exception {
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try { return ex.submit(f).get(60, TimeUnit.SECONDS); } finally { ex.shutdown(); }
  }

  public static void main(String[] args) throws Exception {
    RedissonClient ra = client(args[0], args[2], args[3]);
    RedissonClient rb = client(args[1], args[2], args[3]);
    if (args[4].equals("stress")) { stress(ra, rb); return; }
    String name = "lock:redisson:" + args[4];
    try {
      RLock la = ra.getLock(name), lb = rb.getLock(name);
      la.lock();
      check("isLocked via B", lb.isLocked(), true);
      check("isHeldByCurrentThread", la.isHeldByCurrentThread(), true);
      check("getHoldCount", la.getHoldCount(), 1);
      la.lock();
      check("re-entry hold count", la.getHoldCount(), 2);
      check("tryLock(0) on B", on(() -> lb.tryLock(0, 10, TimeUnit.SECONDS)), false);
      check("isHeldByCurrentThread on B's thread", on(() -> lb.isHeldByCurrentThread()), false);
      la.unlock();
      check("hold count after one unlock", la.getHoldCount(), 1);
      check("still locked", lb.isLocked(), true);
      la.unlock();
      check("released", lb.isLocked(), false);
      check("unlock not held throws", throwsIMSE(() -> la.unlock()), true);

      check("tryLock wait+lease", la.tryLock(1, 10, TimeUnit.SECONDS), true);
      long ttl = la.remainTimeToLive();
      check("remainTimeToLive within lease", ttl > 0 && ttl <= 10000, true);

      // a waiter on replica B, woken by the unlock on replica A
      CountDownLatch started = new CountDownLatch(1);
      AtomicLong waited = new AtomicLong();
      ExecutorService ex = Executors.newSingleThreadExecutor();
      Future<Boolean> waiter = ex.submit(() -> {
        started.countDown();
        long t0 = System.nanoTime();
        boolean ok = lb.tryLock(20, 10, TimeUnit.SECONDS);
        waited.set((System.nanoTime() - t0) / 1_000_000);
        if (ok) lb.unlock();
        return ok;
      });
      started.await();
      Thread.sleep(1500);
      la.unlock();
      check("waiter on B got the lock", waiter.get(30, TimeUnit.SECONDS), true);
      ex.shutdown();
      check("waiter woken by the unlock, not the lease (waited " + waited.get() + " ms)", waited.get() < 5000, true);

      // watchdog renewal: lock() with no lease keeps the lock past the watchdog timeout
      la.lock();
      Thread.sleep(8000);
      ttl = la.remainTimeToLive();
      check("watchdog renewed (pttl " + ttl + ")", ttl > 2000 && ttl <= 6000, true);
      check("still held after 8 s", on(() -> lb.isLocked()), true);
      check("forceUnlock via B", lb.forceUnlock(), true);
      check("free after forceUnlock", la.isLocked(), false);

      // fenced lock: tokens grow
      RFencedLock fa = ra.getFencedLock("lock:fenced:" + args[4]), fb = rb.getFencedLock("lock:fenced:" + args[4]);
      Long t1 = fa.lockAndGetToken();
      check("fenced token issued", t1 != null && t1 > 0, true);
      check("fenced tryLock(0) on B while held", on(() -> fb.tryLockAndGetToken(0, 10, TimeUnit.SECONDS)), null);
      check("getToken via B", fb.getToken(), t1);
      fa.unlock();
      Long t2 = on(() -> { Long t = fb.tryLockAndGetToken(1, 10, TimeUnit.SECONDS); fb.unlock(); return t; });
      check("next token is larger (" + t1 + " -> " + t2 + ")", t2 != null && t2 > t1, true);
    } finally {
      ra.shutdown();
      rb.shutdown();
    }

    if (args.length > 6) { // a tenant whose keys must start with its prefix
      RedissonClient rc = client(args[0], args[5], args[6]);
      try {
        RLock mine = rc.getLock("billing:job:" + args[4]);
        check("tenant lock", mine.tryLock(1, 10, TimeUnit.SECONDS), true);
        check("tenant hold", mine.getHoldCount(), 1);
        mine.unlock();
        check("tenant released", mine.isLocked(), false);
        check("foreign key refused", refused(() -> rc.getLock("search:job").tryLock(0, 10, TimeUnit.SECONDS)), true);
      } finally {
        rc.shutdown();
      }
    }
    System.out.println("PASS " + checks + " checks");
  }

  // stress: 4 threads on each client (one per replica) take one RLock 25
  // times each, re-entering once; nobody else may be inside meanwhile.
  static void stress(RedissonClient ra, RedissonClient rb) throws Exception {
    AtomicInteger inside = new AtomicInteger(), grants = new AtomicInteger(), overlaps = new AtomicInteger();
    ExecutorService ex = Executors.newFixedThreadPool(8);
    List<Future<?>> fs = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      RLock l = (t % 2 == 0 ? ra : rb).getLock("lock:redisson:stress");
      fs.add(ex.submit(() -> {
        for (int n = 0; n < 25; n++) {
          l.lock(10, TimeUnit.SECONDS);
          l.lock(10, TimeUnit.SECONDS);
          if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
          grants.incrementAndGet();
          Thread.sleep(1);
          inside.decrementAndGet();
          l.unlock();
          if (l.getHoldCount() != 1) throw new AssertionError("hold count after one of two unlocks");
          l.unlock();
        }
        return null;
      }));
    }
    for (Future<?> f : fs) f.get(300, TimeUnit.SECONDS);
    ex.shutdown();
    ra.shutdown(); rb.shutdown();
    System.out.println("stress: " + grants + " grants, " + overlaps + " overlaps");
    if (overlaps.get() != 0 || grants.get() != 200) throw new AssertionError("mutual exclusion broken");
    System.out.println("PASS stress");
  }

  static boolean throwsIMSE(Runnable r) {
    try { r.run(); return false; } catch (IllegalMonitorStateException e) { return true; }
  }

  interface Body { Object run() throws Exception; }

  static boolean refused(Body r) {
    try { r.run(); return false; } catch (Exception e) { System.out.println("  refused: " + e.getMessage()); return e.getMessage() != null && e.getMessage().contains("NOPERM"); }
  }
}
