package io.lockstep.bench;

import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;

/**
 * Keyed locks at scale: many distinct keys, each locked once by one client, then fewer keys locked
 * by four clients at once, with Lockstep's {@link KeyedLocks} (flat and hashed layouts) against a
 * Curator {@code InterProcessMutex} per key at {@code root + "/" + key}, as Spring's {@code
 * ZookeeperLockRegistry} makes them.
 *
 * <p>Each variant runs against a server of its own, started with the container settings of {@link
 * #CHECK_INTERVAL_MS} and {@link #MAX_PER_MINUTE} (ZooKeeper's default rate), so that the
 * directories one variant leaves do not count against the next. Figures: acquisitions per second
 * over the whole run (acquire + release of each key), the retained heap per idle key (the heap the
 * lock objects of all keys hold, measured after a full collection before and after they are
 * dropped, over the key count), the largest directory (children, from the layout: what the server
 * holds at the peak if nothing is reaped), and the directories the server still holds {@link
 * #REAPER_WAIT_MS} after the last release (its node count then, less the count before the run).
 */
final class KeyedScenario {
  static final int CHECK_INTERVAL_MS = 10_000;
  static final int MAX_PER_MINUTE = 10_000;
  static final int REAPER_WAIT_MS = 12_000;

  /** The threads of the one-client run. */
  static final int THREADS = 16;

  /** The clients of the contended run, and each one's threads. */
  static final int CLIENTS = 4;

  static final int THREADS_PER_CLIENT = 4;

  private static final String ROOT = "/keyed";

  /** The lock objects compared. */
  enum Variant {
    CURATOR_FLAT("Curator `InterProcessMutex` per key, `root/key` (Spring's registry)"),
    LOCKSTEP_FLAT("Lockstep `KeyedLocks`, `KeyLayout.flat()`"),
    LOCKSTEP_HASHED("Lockstep `KeyedLocks`, `KeyLayout.hashed(2)`");

    private final String label;

    Variant(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }
  }

  /**
   * One variant's figures under one load.
   *
   * @param variant the lock objects
   * @param clients 1 (each key once) or {@link #CLIENTS} (each key once by each client)
   * @param keys the distinct keys
   * @param acquisitions the acquisitions made
   * @param seconds how long they took
   * @param heapBytesPerKey the retained heap per idle key, or -1 if not measured
   * @param largestDirectory the most children of one directory
   * @param directoriesLeft the directories left {@link #REAPER_WAIT_MS} after the last release
   */
  record Result(
      Variant variant,
      int clients,
      int keys,
      long acquisitions,
      double seconds,
      double heapBytesPerKey,
      int largestDirectory,
      long directoriesLeft) {
    double perSecond() {
      return acquisitions / seconds;
    }
  }

  private KeyedScenario() {}

  /**
   * Runs every variant under both loads; {@code keys} one-client keys, {@code contended} shared.
   */
  static List<Result> run(int keys, int contended) throws Exception {
    List<Result> results = new ArrayList<>();
    for (Variant variant : Variant.values()) {
      results.add(once(variant, 1, keys));
      results.add(once(variant, CLIENTS, contended));
    }
    return results;
  }

  private static Result once(Variant variant, int clients, int keys) throws Exception {
    System.setProperty("znode.container.checkIntervalMs", Integer.toString(CHECK_INTERVAL_MS));
    System.setProperty("znode.container.maxPerMinute", Integer.toString(MAX_PER_MINUTE));
    try (TestingServer server = BenchZooKeeper.startServer()) {
      ServerProbe probe = ServerProbe.of(server.getConnectString());
      long nodesBefore = znodes(probe);
      List<CuratorFramework> made = new ArrayList<>();
      List<KeyLocker> lockers = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        CuratorFramework client = BenchZooKeeper.newClient(server.getConnectString());
        made.add(client);
        lockers.add(KeyLocker.of(variant, client));
      }
      int threads = clients == 1 ? THREADS : THREADS_PER_CLIENT;
      ExecutorService pool = Executors.newFixedThreadPool(clients * threads);
      long start = System.nanoTime();
      try {
        List<Future<?>> work = new ArrayList<>();
        for (KeyLocker locker : lockers) {
          AtomicInteger next = new AtomicInteger(); // each client walks the keys in one order
          for (int t = 0; t < threads; t++) {
            work.add(
                pool.submit(
                    () -> {
                      for (int i = next.getAndIncrement(); i < keys; i = next.getAndIncrement()) {
                        locker.lockOnce(key(i));
                      }
                      return null;
                    }));
          }
        }
        for (Future<?> future : work) {
          future.get();
        }
      } finally {
        pool.shutdownNow();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      double heap = clients == 1 ? lockers.get(0).heapPerKey(keys) : -1;
      Thread.sleep(REAPER_WAIT_MS);
      long left = znodes(probe) - nodesBefore;
      made.forEach(CuratorFramework::close);
      Result result =
          new Result(
              variant,
              clients,
              keys,
              (long) clients * keys,
              seconds,
              heap,
              largestDirectory(variant, keys),
              left);
      log(result);
      return result;
    } finally {
      System.clearProperty("znode.container.checkIntervalMs");
      System.clearProperty("znode.container.maxPerMinute");
    }
  }

  static String key(int i) {
    return "key-" + i;
  }

  /** The most children of one directory once every key is locked, from the layout. */
  static int largestDirectory(Variant variant, int keys) {
    if (variant != Variant.LOCKSTEP_HASHED) {
      return keys; // the root holds a directory per key
    }
    Map<String, Integer> children = new HashMap<>();
    for (int i = 0; i < keys; i++) {
      String path = KeyLayout.hashed(2).pathOf(ROOT, key(i));
      String leaf = ZKPaths.getPathAndNode(path).getPath();
      if (children.merge(leaf, 1, Integer::sum) == 1) {
        String middle = ZKPaths.getPathAndNode(leaf).getPath();
        if (children.merge(middle, 1, Integer::sum) == 1) {
          children.merge(ROOT, 1, Integer::sum);
        }
      }
    }
    return children.values().stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  private static long znodes(ServerProbe probe) {
    return Long.parseLong(probe.monitor().get("zk_znode_count"));
  }

  /** The heap in use after full collections. */
  static long usedHeap() {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  private static void log(Result result) {
    System.out.printf(
        "[bench] keyed %s, %d client(s), %d keys: %.0f acquisitions/s, %.0f bytes/key, largest"
            + " directory %d, %d directories left%n",
        result.variant().name(),
        result.clients(),
        result.keys(),
        result.perSecond(),
        result.heapBytesPerKey(),
        result.largestDirectory(),
        result.directoriesLeft());
  }

  /** One client's lock objects by key, kept as the library keeps them. */
  private abstract static class KeyLocker {
    static KeyLocker of(Variant variant, CuratorFramework client) {
      return switch (variant) {
        case CURATOR_FLAT -> new CuratorLocker(client);
        case LOCKSTEP_FLAT -> new LockstepLocker(new KeyedLocks(client, ROOT, KeyLayout.flat()));
        case LOCKSTEP_HASHED ->
            new LockstepLocker(new KeyedLocks(client, ROOT, KeyLayout.hashed(2)));
      };
    }

    abstract void lockOnce(String key) throws Exception;

    /** Drops every lock object. */
    abstract void drop();

    /** The retained heap per lock object, over {@code keys} of them: measured, then dropped. */
    double heapPerKey(int keys) {
      long held = usedHeap();
      drop();
      long dropped = usedHeap();
      return (double) (held - dropped) / keys;
    }
  }

  private static final class LockstepLocker extends KeyLocker {
    private final KeyedLocks locks;

    LockstepLocker(KeyedLocks locks) {
      this.locks = locks;
    }

    @Override
    void lockOnce(String key) throws Exception {
      ReentrantMutex lock = locks.mutex(key);
      lock.acquire();
      lock.release();
    }

    @Override
    void drop() {
      locks.expireUnusedOlderThan(java.time.Duration.ZERO);
    }
  }

  /** An {@code InterProcessMutex} per key, cached by path as Spring's registry caches its locks. */
  private static final class CuratorLocker extends KeyLocker {
    private final CuratorFramework client;
    private final Map<String, InterProcessMutex> locks = new ConcurrentHashMap<>();

    CuratorLocker(CuratorFramework client) {
      this.client = client;
    }

    @Override
    void lockOnce(String key) throws Exception {
      InterProcessMutex lock =
          locks.computeIfAbsent(ROOT + "/" + key, path -> new InterProcessMutex(client, path));
      if (!lock.acquire(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("no grant in 60 s: " + key);
      }
      lock.release();
    }

    @Override
    void drop() {
      locks.clear();
    }
  }
}
