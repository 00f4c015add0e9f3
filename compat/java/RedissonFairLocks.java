// Redisson's RFairLock as a team uses it, run by hand (issue 26) through two
// proxy replicas, and against one plain redis-server to check that the
// program's expectations are Redis's own. The library is not in this
// repository and cannot be fetched by CI (no Maven registry); its traffic,
// recorded with cmd/wirerec, is replayed in CI from compat/transcripts by
// TestTranscripts.
import java.util.*;
import java.util.concurrent.*;
import org.redisson.Redisson;
import org.redisson.api.*;
import org.redisson.config.Config;

// args: addrA addrB tag (redis://host:port each; the same address twice for one server)
public class RedissonFairLocks {
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
        .setConnectionMinimumIdleSize(2).setConnectionPoolSize(8)
        .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
    return Redisson.create(c);
  }

  // An actor is one thread: Redisson's locks belong to threads.
  static class Actor {
    final ExecutorService ex = Executors.newSingleThreadExecutor();
    final RLock lock;
    Actor(RLock lock) { this.lock = lock; }
    <T> T run(Callable<T> f) throws Exception { return ex.submit(f).get(60, TimeUnit.SECONDS); }
    <T> Future<T> start(Callable<T> f) { return ex.submit(f); }
  }

  static boolean throwsIMSE(Callable<?> f) {
    try { f.call(); return false; } catch (IllegalMonitorStateException e) { return true; } catch (Exception e) { throw new RuntimeException(e); }
  }

  public static void main(String[] args) throws Exception {
    RedissonClient ra = client(args[0], "fair-1"), rb = client(args[1], "fair-2");
    String name = "lock:fair:" + args[2];
    try {
      Actor a = new Actor(ra.getFairLock(name)), c = new Actor(ra.getFairLock(name));
      Actor b1 = new Actor(rb.getFairLock(name)), b2 = new Actor(rb.getFairLock(name));

      // one holder; tryLock() without a wait is refused; re-entry
      a.run(() -> { a.lock.lock(20, TimeUnit.SECONDS); return null; });
      check("isLocked via B", b1.lock.isLocked(), true);
      check("B's tryLock() while A holds", b1.run(() -> b1.lock.tryLock()), false);
      check("A re-enters", a.run(() -> { a.lock.lock(20, TimeUnit.SECONDS); return a.lock.getHoldCount(); }), 2);
      check("A's hold count after one unlock", a.run(() -> { a.lock.unlock(); return a.lock.getHoldCount(); }), 1);
      check("B cannot unlock A's lock", b1.run(() -> throwsIMSE(() -> { b1.lock.unlock(); return null; })), true);

      // waiters on both clients are served in the order they came, each woken
      // by its predecessor's unlock (A's lease has 20 s left)
      List<String> order = Collections.synchronizedList(new ArrayList<>());
      Map<String, Long> got = new ConcurrentHashMap<>();
      Future<?>[] waiters = new Future<?>[3];
      Actor[] queue = {b1, c, b2};
      String[] names = {"B1", "A2", "B2"};
      for (int i = 0; i < 3; i++) {
        Actor w = queue[i];
        String n = names[i];
        waiters[i] = w.start(() -> {
          w.lock.lock(20, TimeUnit.SECONDS);
          got.put(n, System.nanoTime());
          order.add(n);
          Thread.sleep(300);
          w.lock.unlock();
          return null;
        });
        Thread.sleep(700);
      }
      check("no waiter holds it yet", order.size(), 0);
      long t0 = System.nanoTime();
      a.run(() -> { a.lock.unlock(); return null; });
      for (Future<?> f : waiters) f.get(60, TimeUnit.SECONDS);
      check("the waiters' order", String.join(",", order), "B1,A2,B2");
      long first = (got.get("B1") - t0) / 1_000_000;
      check("the first waiter was woken by the unlock, not a lease (" + first + " ms)", first < 3000, true);
      long last = (got.get("B2") - t0) / 1_000_000;
      check("each next waiter was woken by its predecessor's unlock (" + last + " ms)", last < 6000, true);
      check("free after the last waiter", b1.lock.isLocked(), false);

      // a waiter that gives up leaves the queue: it never blocks the next one
      a.run(() -> { a.lock.lock(20, TimeUnit.SECONDS); return null; });
      check("B's tryLock(1 s) while A holds", b1.run(() -> b1.lock.tryLock(1, 20, TimeUnit.SECONDS)), false);
      a.run(() -> { a.lock.unlock(); return null; });
      check("the lock is free for anyone after the waiter gave up", b2.run(() -> b2.lock.tryLock()), true);
      b2.run(() -> { b2.lock.unlock(); return null; });

      // tryLock with a wait gets it when the holder unlocks in time
      a.run(() -> { a.lock.lock(20, TimeUnit.SECONDS); return null; });
      Future<Boolean> patient = b1.start(() -> b1.lock.tryLock(15, 20, TimeUnit.SECONDS));
      Thread.sleep(800);
      a.run(() -> { a.lock.unlock(); return null; });
      check("B's tryLock(15 s) got it after A's unlock", patient.get(30, TimeUnit.SECONDS), true);
      check("A cannot take it from the front of nobody's queue", a.run(() -> a.lock.tryLock()), false);

      // forceUnlock frees another thread's lock
      check("forceUnlock by A", a.run(() -> a.lock.forceUnlock()), true);
      check("isLocked after forceUnlock", a.lock.isLocked(), false);
      check("forceUnlock of a free lock", a.run(() -> a.lock.forceUnlock()), false);

      // the watchdog renews a lock taken without a lease past its timeout
      a.run(() -> { a.lock.lock(); return null; });
      Thread.sleep(7500);
      check("held past the watchdog timeout", b1.lock.isLocked(), true);
      check("B's tryLock() while the watchdog renews A's lock", b1.run(() -> b1.lock.tryLock()), false);
      a.run(() -> { a.lock.unlock(); return null; });
      check("free after A's unlock", b1.lock.isLocked(), false);

      System.out.println("PASS " + checks + " checks");
    } finally {
      ra.shutdown();
      rb.shutdown();
    }
    System.exit(0);
  }
}
