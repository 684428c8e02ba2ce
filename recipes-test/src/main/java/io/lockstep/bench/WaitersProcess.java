package io.lockstep.bench;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.Library;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.utils.CloseableUtils;

/**
 * The client side of {@link WaitersScenario}, in a JVM of its own so that its heap and threads are
 * the client's alone (the suite's JVM also runs the server, whose nodes and watches grow with the
 * queue). Arguments: {@code connectString library waiters path}. Prints one line, {@value #PREFIX}
 * followed by {@code name=value} pairs, and exits.
 *
 * <p>One client, one lock on {@code path}, held first by this process. Lockstep queues N {@code
 * acquireAsync()} calls on one {@code ReentrantMutex}, each grant closing its {@code LockHold} at
 * once; Curator starts N threads, each calling {@code acquire()} and then {@code release()} on an
 * {@code InterProcessMutex} of its own (threads sharing one wait on one monitor, and each release
 * wakes them all). Queued: the server has N more nodes and N more watches, less one (each waiter
 * watches the node ahead of it; the first one's may be the holder's own watch on its node, and a
 * session has one watch per node), and then, before the figures are taken, the watch count stays
 * put for three polls 5 ms apart. Heap: used heap after a full collection ({@code
 * MemoryMXBean.gc()}, repeated until it stops shrinking), once before the first waiter and once
 * when all are queued. Threads: the JVM's live threads ({@code ThreadMXBean}) at the same two
 * moments, and the peak. Drain: from the holder's release to the last grant.
 */
public final class WaitersProcess {
  static final String PREFIX = "WAITERS-RESULT";

  private static final Duration QUEUE_TIMEOUT = Duration.ofMinutes(10);
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final int STEADY_POLLS = 3;
  private static final long GC_SETTLED_BYTES = 256 * 1024;

  private final CuratorFramework client;
  private final ServerProbe probe;
  private final int waiters;
  private final long[] grantedAt;
  private final CountDownLatch drained;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Map<String, Object> result = new LinkedHashMap<>();

  private WaitersProcess(String connect, int waiters) {
    this.client = BenchZooKeeper.newClient(connect);
    this.probe = ServerProbe.of(connect);
    this.waiters = waiters;
    this.grantedAt = new long[waiters];
    this.drained = new CountDownLatch(waiters);
  }

  /** See the class comment. */
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException("usage: connectString library waiters path");
    }
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    Library library = Library.valueOf(args[1]);
    int waiters = Integer.parseInt(args[2]);
    WaitersProcess run = new WaitersProcess(args[0], waiters);
    try {
      BenchZooKeeper.createDirectories(run.client, List.of(args[3]));
      if (library == Library.LOCKSTEP) {
        run.lockstep(args[3]);
      } else {
        run.curator(args[3]);
      }
      System.out.println(
          PREFIX
              + " "
              + run.result.entrySet().stream()
                  .map(e -> e.getKey() + "=" + e.getValue())
                  .collect(Collectors.joining(" ")));
      System.out.flush();
    } finally {
      CloseableUtils.closeQuietly(run.client);
    }
    System.exit(0); // Curator and ZooKeeper leave threads behind
  }

  private void lockstep(String path) throws Exception {
    ReentrantMutex lock = new ReentrantMutex(client, path);
    for (int i = 0; i < 3; i++) { // warm the asynchronous path
      lock.acquireAsync().toCompletableFuture().get(1, TimeUnit.MINUTES).close();
    }
    LockHold first = lock.hold();
    AtomicInteger nextGrant = new AtomicInteger();
    int[] grantOrder = new int[waiters];
    Baseline baseline = baseline();
    long start = System.nanoTime();
    for (int i = 0; i < waiters; i++) {
      int waiter = i;
      var unused =
          lock.acquireAsync()
              .whenComplete(
                  (hold, error) -> {
                    if (error != null) {
                      failure.compareAndSet(null, error);
                    } else {
                      grantedAt[waiter] = System.nanoTime();
                      grantOrder[nextGrant.getAndIncrement()] = waiter;
                      hold.close();
                    }
                    drained.countDown();
                  });
    }
    queuedAndDrained(baseline, start, first::close);
    boolean inOrder = true;
    for (int i = 1; i < waiters; i++) {
      inOrder &= grantOrder[i] > grantOrder[i - 1];
    }
    result.put("inOrder", inOrder);
  }

  private void curator(String path) throws Exception {
    InterProcessMutex holder = new InterProcessMutex(client, path);
    for (int i = 0; i < 3; i++) {
      InterProcessMutex warmUp = new InterProcessMutex(client, path);
      warmUp.acquire();
      warmUp.release();
    }
    holder.acquire();
    Baseline baseline = baseline();
    long start = System.nanoTime();
    List<Thread> threads = new ArrayList<>(waiters);
    for (int i = 0; i < waiters; i++) {
      int waiter = i;
      // A lock object per thread: threads sharing one InterProcessMutex wait on one monitor, and
      // each release wakes all of them to read the queue again.
      InterProcessMutex lock = new InterProcessMutex(client, path);
      Thread thread =
          new Thread(
              () -> {
                try {
                  lock.acquire();
                  grantedAt[waiter] = System.nanoTime();
                  lock.release();
                } catch (Exception | Error e) {
                  failure.compareAndSet(null, e);
                } finally {
                  drained.countDown();
                }
              },
              "waiter-" + i);
      thread.setDaemon(true);
      threads.add(thread);
      thread.start();
    }
    queuedAndDrained(
        baseline,
        start,
        () -> {
          try {
            holder.release();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    for (Thread thread : threads) {
      thread.join(QUEUE_TIMEOUT.toMillis());
    }
  }

  /** The counts before the first waiter: heap after a full collection, threads, queue counts. */
  private record Baseline(long heap, int threads, long znodes, long watches) {}

  private Baseline baseline() {
    long heap = usedHeapAfterGc();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    threads.resetPeakThreadCount();
    Map<String, String> mntr = probe.monitor();
    return new Baseline(
        heap,
        threads.getThreadCount(),
        number(mntr, "zk_znode_count"),
        number(mntr, "zk_watch_count"));
  }

  /** Waits until all are queued, takes the counts, releases the holder and waits for the drain. */
  private void queuedAndDrained(Baseline baseline, long start, Runnable releaseHolder)
      throws Exception {
    long deadline = start + QUEUE_TIMEOUT.toNanos();
    long queued = 0;
    long lastWatches = -1;
    int steadyPolls = 0;
    while (steadyPolls < STEADY_POLLS) {
      if (failure.get() != null) {
        throw new IllegalStateException("a waiter failed", failure.get());
      }
      Map<String, String> mntr = probe.monitor();
      long watches = number(mntr, "zk_watch_count");
      // The first waiter's watch on the holder's node may be the holder's own: one per session.
      if (queued == 0
          && number(mntr, "zk_znode_count") >= baseline.znodes() + waiters
          && watches >= baseline.watches() + waiters - 1) {
        queued = System.nanoTime();
      }
      steadyPolls = queued != 0 && watches == lastWatches ? steadyPolls + 1 : 0;
      lastWatches = watches;
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(waiters + " waiters not queued within " + QUEUE_TIMEOUT);
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    int liveQueued = threads.getThreadCount();
    long heapQueued = usedHeapAfterGc();
    ServerCounters before = probe.settled();
    long released = System.nanoTime();
    releaseHolder.run();
    if (!drained.await(QUEUE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(waiters + " waiters not drained within " + QUEUE_TIMEOUT);
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a waiter failed", failure.get());
    }
    long last = released;
    for (long grant : grantedAt) {
      last = Math.max(last, grant);
    }
    ServerCounters.Traffic traffic = probe.settled().since(before);
    result.put("queueNanos", queued - start);
    result.put("drainNanos", last - released);
    result.put("heapBefore", baseline.heap());
    result.put("heapQueued", heapQueued);
    result.put("threadsBefore", baseline.threads());
    result.put("threadsQueued", liveQueued);
    result.put("threadsPeak", threads.getPeakThreadCount());
    result.put("requests", traffic.requests());
    result.put("responseBytes", traffic.responseBytes());
  }

  /** Used heap after full collections, repeated until the figure stops shrinking. */
  static long usedHeapAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      memory.gc();
      long now = memory.getHeapMemoryUsage().getUsed();
      boolean settled = used - now < GC_SETTLED_BYTES;
      used = Math.min(used, now);
      if (settled) {
        break;
      }
    }
    return used;
  }

  private static long number(Map<String, String> mntr, String key) {
    String value = mntr.get(key);
    if (value == null) {
      throw new IllegalStateException("the server's mntr has no " + key);
    }
    return (long) Double.parseDouble(value);
  }
}
