package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Watch events per acquisition: T threads (8 by default) contend for one mutex, each with a lock
 * object of its own, through a client each or through one shared client, and acquire and release it
 * a fixed number of times. The server counts every watch notification it sends ({@code mntr}: data
 * watches fired by deletes and by writes, child watches), settled before and after, so the figures
 * are exact for the run; divided by the acquisitions they are the wake-ups the recipe costs the
 * clients (Curator's ideal is one per contended acquisition: the successor's).
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only watches"
 * </pre>
 */
final class WatchScenario {
  private static final Duration TIMEOUT = Duration.ofMinutes(5);

  /**
   * One run.
   *
   * @param contender whose mutex
   * @param mode how the threads reach ZooKeeper
   * @param threads the threads (and, for {@link ClientMode#OWN}, the clients)
   * @param acquisitions acquisitions in all
   * @param traffic the ZooKeeper traffic of the run, settled at both ends
   */
  record Result(
      Contender contender,
      ClientMode mode,
      int threads,
      long acquisitions,
      ServerCounters.Traffic traffic) {

    /** All watch notifications per acquisition. */
    double watchesPerAcquisition() {
      return per(traffic.watchesFired());
    }

    /** Data watches fired by deletes, per acquisition. */
    double deletedPerAcquisition() {
      return per(traffic.deletedWatchesFired());
    }

    /** Child watches fired, per acquisition. */
    double childPerAcquisition() {
      return per(traffic.childWatchesFired());
    }

    /** Data watches fired by writes, per acquisition. */
    double changedPerAcquisition() {
      return per(traffic.changedWatchesFired());
    }

    /** Requests per acquisition. */
    double requestsPerAcquisition() {
      return per(traffic.requests());
    }

    private double per(long count) {
      return (double) count / acquisitions;
    }
  }

  private WatchScenario() {}

  static Result run(
      ServerProbe probe,
      String connectString,
      Contender contender,
      ClientMode mode,
      int threads,
      int acquisitionsPerThread)
      throws Exception {
    String path = Paths.unique("watches-" + mode.name().toLowerCase(Locale.ROOT));
    try (Clients clients = new Clients(connectString, mode == ClientMode.SHARED ? 1 : threads)) {
      BenchZooKeeper.createDirectories(clients.get(0), List.of(path));
      List<InterProcessLock> locks = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        locks.add(contender.newLock(clients.get(i), path));
      }
      for (InterProcessLock lock : locks) { // one cycle each, not counted: connections warm
        lock.acquire();
        lock.release();
      }
      ServerCounters before = probe.settled();
      CountDownLatch start = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(threads);
      AtomicReference<Exception> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        InterProcessLock lock = locks.get(i);
        Thread worker =
            new Thread(
                () -> {
                  try {
                    start.await();
                    for (int n = 0; n < acquisitionsPerThread; n++) {
                      lock.acquire();
                      lock.release();
                    }
                  } catch (Exception e) {
                    failure.compareAndSet(null, e);
                  } finally {
                    done.countDown();
                  }
                },
                "watches-" + i);
        workers.add(worker);
        worker.start();
      }
      start.countDown();
      if (!done.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the watch-event run did not finish within " + TIMEOUT);
      }
      for (Thread worker : workers) {
        worker.join();
      }
      if (failure.get() != null) {
        throw failure.get();
      }
      ServerCounters.Traffic traffic = probe.settled().since(before);
      return new Result(contender, mode, threads, (long) threads * acquisitionsPerThread, traffic);
    }
  }
}
