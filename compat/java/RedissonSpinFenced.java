// Redisson's RSpinLock and RFencedLock.lock() as a team uses them, run by hand
// through two proxy replicas (issue 26) and against one plain redis-server,
// with the library on the classpath (built from source by
// ../shared/tools/java-clients.sh; not in this repository, and CI cannot fetch
// it: no Maven registry). Its traffic through the proxy, recorded with
// cmd/wirerec, is replayed in CI from compat/transcripts by TestTranscripts.
import java.util.*;
import java.util.concurrent.*;
import org.redisson.Redisson;
import org.redisson.api.*;
import org.redisson.config.Config;

// args: addrA addrB tag (redis://host:port each; the same address twice for one server)
public class RedissonSpinFenced {
  static int checks = 0;

  static void check(String what, Object got, Object want) {
    checks++;
    if (!Objects.equals(got, want)) throw new AssertionError(what + ": got " + got + ", want " + want);
    System.out.println("ok " + what + " = " + got);
  }

  static RedissonClient client(String addr) {
    Config c = new Config();
    c.setLockWatchdogTimeout(6000); // renew every 2 s
    c.useSingleServer().setAddress(addr)
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
    RedissonClient ra = client(args[0]), rb = client(args[1]);
    String tag = args[2];
    try {
      // RSpinLock: its lock is RLock 3.12.3-3.18's text, its unlock its own.
      RLock sa = ra.getSpinLock("lock:spin:" + tag), sb = rb.getSpinLock("lock:spin:" + tag);
      sa.lock(5, TimeUnit.SECONDS);
      long ttl = sa.remainTimeToLive();
      check("spin lock(5 s) holds with a TTL within 5 s", ttl > 0 && ttl <= 5000, true);
      sa.lock(5, TimeUnit.SECONDS);
      check("spin re-entry: hold count", sa.getHoldCount(), 2);
      check("the other client's tryLock(0) is refused", on(() -> sb.tryLock(0, 5, TimeUnit.SECONDS)), false);
      sa.unlock();
      check("one hold given up: still locked", sa.isLocked(), true);
      sa.unlock();
      check("the other client's tryLock(0) once released", on(() -> {
        boolean ok = sb.tryLock(0, 5, TimeUnit.SECONDS);
        if (ok) sb.unlock();
        return ok;
      }), true);
      sa.lock(5, TimeUnit.SECONDS);
      check("forceUnlock from the other client", on(() -> sb.forceUnlock()), true);
      check("free after forceUnlock", sa.isLocked(), false);

      // RFencedLock: lock() counts a token as lockAndGetToken does.
      RFencedLock fa = ra.getFencedLock("lock:fenced:" + tag), fb = rb.getFencedLock("lock:fenced:" + tag);
      fa.lock();
      Long t1 = fa.getToken();
      check("fenced lock(): a token", t1 != null && t1 > 0, true);
      check("the other client's tryLock(0) is refused", on(() -> fb.tryLock(0, 5, TimeUnit.SECONDS)), false);
      fa.unlock();
      Long t2 = on(() -> {
        fb.lock(5, TimeUnit.SECONDS);
        Long t = fb.getToken();
        fb.unlock();
        return t;
      });
      check("the next owner's token is larger", t2 != null && t2 > t1, true);
      System.out.println("passed " + checks + " checks");
    } finally {
      ra.shutdown();
      rb.shutdown();
    }
  }
}
