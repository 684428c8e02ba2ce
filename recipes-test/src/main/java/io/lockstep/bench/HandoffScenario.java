package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Handoff down a queue: one holder and N queued waiters on one mutex ({@code InterProcessMutex}
 * against {@code ReentrantMutex}); the holder lets go and the queue drains, each waiter releasing
 * as soon as it is granted.
 *
 * <p><b>Workload.</b> The holder has a session of its own; the N waiters are spread round-robin
 * over a few sessions (10 by default, so 200 per session at N = 2000), each waiter a thread of its
 * own with a lock object of its own. Once every waiter is queued and watching (the server's watch
 * count stops moving), the server's statistics are reset and the holder releases. Measured: the
 * time from the holder's release to the last waiter's grant (drain time; per handoff = drain / N),
 * the gaps between successive grants, and from {@code mntr} the requests and response bytes per
 * handoff and the watches fired per delete (1 is the ideal; N would be a herd).
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only handoff"
 * </pre>
 */
final class HandoffScenario {
  private static final Duration ENQUEUE_TIMEOUT = Duration.ofMinutes(3);
  private static final long WAITER_STACK_BYTES = 256 * 1024;

  /**
   * One drain.
   *
   * @param library whose mutex
   * @param waiters N, the waiters queued behind the holder
   * @param sessions the sessions the waiters share
   * @param drainNanos from the holder's release to the last waiter's grant
   * @param gaps the time between successive grants (the first from the holder's release)
   * @param traffic the ZooKeeper traffic of the drain
   * @param maxDeletedWatches the most data watches a single delete fired
   */
  record Result(
      Library library,
      int waiters,
      int sessions,
      long drainNanos,
      Histogram gaps,
      ServerCounters.Traffic traffic,
      long maxDeletedWatches) {

    double drainMillis() {
      return drainNanos / 1e6;
    }

    double handoffMicros() {
      return drainNanos / 1e3 / waiters;
    }

    double requestsPerHandoff() {
      return (double) traffic.requests() / waiters;
    }

    double responseBytesPerHandoff() {
      return (double) traffic.responseBytes() / waiters;
    }

    /** Watches fired per delete: the holder's and each waiter's release each delete one node. */
    double watchesPerDelete() {
      return (double) traffic.watchesFired() / (waiters + 1);
    }
  }

  private HandoffScenario() {}

  static Result run(
      ServerProbe probe, String connectString, Library library, int waiters, int sessions)
      throws Exception {
    String path = Paths.unique("handoff-" + waiters);
    try (Clients holderClient = new Clients(connectString, 1);
        Clients waiterClients = new Clients(connectString, sessions)) {
      CuratorFramework client = holderClient.get(0);
      BenchZooKeeper.createDirectories(client, List.of(path));
      InterProcessLock holder = Recipe.MUTEX.newLock(library, client, path, 1);
      holder.acquire();
      long[] grantedAt = new long[waiters];
      CountDownLatch drained = new CountDownLatch(waiters);
      AtomicReference<Exception> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>(waiters);
      for (int i = 0; i < waiters; i++) {
        int waiter = i;
        InterProcessLock lock = Recipe.MUTEX.newLock(library, waiterClients.get(i), path, 1);
        Runnable body =
            () -> {
              try {
                lock.acquire();
                grantedAt[waiter] = System.nanoTime();
                lock.release();
              } catch (Exception e) {
                failure.compareAndSet(null, e);
              } finally {
                drained.countDown();
              }
            };
        threads.add(new Thread(null, body, "waiter-" + i, WAITER_STACK_BYTES));
      }
      threads.forEach(Thread::start);
      awaitQueued(probe, client, path, waiters);

      probe.resetStatistics();
      ServerCounters before = probe.read();
      long released = System.nanoTime();
      holder.release();
      if (!drained.await(ENQUEUE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the queue of " + waiters + " did not drain");
      }
      for (Thread thread : threads) {
        thread.join();
      }
      if (failure.get() != null) {
        throw failure.get();
      }
      ServerCounters after = probe.settled();
      long[] grants = grantedAt.clone();
      Arrays.sort(grants);
      Histogram gaps = LoadRun.newHistogram();
      long previous = released;
      for (long grant : grants) {
        gaps.recordValue(Math.max(0, grant - previous));
        previous = grant;
      }
      return new Result(
          library,
          waiters,
          sessions,
          grants[grants.length - 1] - released,
          gaps,
          after.since(before),
          after.maxDeletedWatches());
    }
  }

  /**
   * Waits until all waiters have their node in the queue and have armed their watch: the queue
   * holds N + 1 nodes and the server's watch count is at least N and has stopped moving.
   */
  private static void awaitQueued(
      ServerProbe probe, CuratorFramework client, String path, int waiters) {
    Poll.until(
        waiters + " waiters queued",
        ENQUEUE_TIMEOUT,
        () -> {
          try {
            return client.getChildren().forPath(path).size() == waiters + 1;
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    long[] last = {-1};
    Poll.until(
        waiters + " waiters watching",
        ENQUEUE_TIMEOUT,
        () -> {
          long watches = probe.watchCount();
          boolean steady = watches >= waiters && watches == last[0];
          last[0] = watches;
          return steady;
        });
    probe.settled();
  }
}
