// RLock under contention as a Redisson team's workers meet it, run by hand
// (issue 26: throughput at least 0.8x plain Redis) through two proxy
// replicas and against one plain redis-server, each row in the same run.
// The library is not in this repository (no Maven registry in CI): this is
// a measurement to run with the real client built from source.
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.redisson.Redisson;
import org.redisson.api.*;
import org.redisson.config.Config;

// args: addrA addrB key-prefix
// Row "threads": 2 clients x 4 threads, each 40 lock()/unlock() of one lock.
// Row "clients": 8 clients x 1 thread, each 100 lock()/unlock() of one lock.
// Each critical section checks that nobody else is inside (a counter).
public class RedissonContention {
  static RedissonClient client(String addr, String name) {
    Config c = new Config();
    c.useSingleServer().setAddress(addr).setClientName(name)
        .setConnectionMinimumIdleSize(4).setConnectionPoolSize(8)
        .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2);
    return Redisson.create(c);
  }

  static final AtomicInteger inside = new AtomicInteger();
  static final AtomicInteger overlaps = new AtomicInteger();

  static long run(List<RedissonClient> clients, int threadsPerClient, int each, String name) throws Exception {
    ExecutorService ex = Executors.newCachedThreadPool();
    List<Future<?>> fs = new ArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    for (RedissonClient c : clients) {
      for (int t = 0; t < threadsPerClient; t++) {
        RLock l = c.getLock(name);
        fs.add(ex.submit(() -> {
          go.await();
          for (int i = 0; i < each; i++) {
            l.lock();
            try {
              if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
              inside.decrementAndGet();
            } finally {
              l.unlock();
            }
          }
          return null;
        }));
      }
    }
    long t0 = System.nanoTime();
    go.countDown();
    for (Future<?> f : fs) f.get(300, TimeUnit.SECONDS);
    ex.shutdown();
    return (System.nanoTime() - t0) / 1_000_000;
  }

  public static void main(String[] a) throws Exception {
    String addrA = a[0], addrB = a[1], prefix = a[2];
    List<RedissonClient> two = List.of(client(addrA, "cont-a"), client(addrB, "cont-b"));
    long ms = run(two, 4, 40, prefix + ":threads");
    System.out.printf("threads: 2 clients x 4 threads x 40 lock/unlock of one lock: %d ms (%.0f locks/s)%n", ms, 320 * 1000.0 / ms);
    List<RedissonClient> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) eight.add(client(i % 2 == 0 ? addrA : addrB, "cont-" + i));
    ms = run(eight, 1, 100, prefix + ":clients");
    System.out.printf("clients: 8 clients x 100 lock/unlock of one lock: %d ms (%.0f locks/s)%n", ms, 800 * 1000.0 / ms);
    System.out.println("overlaps: " + overlaps.get());
    for (RedissonClient c : two) c.shutdown();
    for (RedissonClient c : eight) c.shutdown();
    if (overlaps.get() != 0) System.exit(1);
  }
}
