package io.lockstep.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Contention on one mutex (each {@link Contender}: {@code InterProcessMutex} against {@code
 * ReentrantMutex}): T threads (1, 2, 4, 8, 16) acquire and release it in a loop, either all through
 * one shared client or each through a client (session) of its own.
 *
 * <p><b>Workload.</b> Each thread has a lock object of its own on the shared path and repeats: time
 * {@code acquire()}, then {@code release()} at once (no work under the lock, so the figures are the
 * recipe's own cost). After a warm-up period, a measured period records acquisitions per second and
 * the acquire latency (p50, p99, p999) with HdrHistogram, and from {@code mntr} the requests per
 * acquisition.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only contention"
 * </pre>
 */
final class ContentionScenario {
  /** How the threads reach ZooKeeper. */
  enum ClientMode {
    /** All threads share one client, one session. */
    SHARED("one shared client"),
    /** Each thread has a client of its own. */
    OWN("a client per thread");

    private final String label;

    ClientMode(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }
  }

  private ContentionScenario() {}

  static LoadResult run(
      ServerProbe probe,
      String connectString,
      SuiteSettings settings,
      Contender contender,
      ClientMode mode,
      int threads)
      throws Exception {
    String path = Paths.unique("contention-" + mode.name().toLowerCase(Locale.ROOT));
    try (Clients clients = new Clients(connectString, mode == ClientMode.SHARED ? 1 : threads)) {
      BenchZooKeeper.createDirectories(clients.get(0), List.of(path));
      Recorder recorder = LoadRun.newRecorder();
      List<InterProcessLock> locks = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        locks.add(contender.newLock(clients.get(i), path));
      }
      return LoadRun.measure(
          probe,
          settings,
          contender.library(),
          threads,
          List.of(recorder),
          i -> timedCycle(locks.get(i), recorder));
    }
  }

  /** A step that times the acquire of {@code lock} into {@code recorder}, then releases. */
  static LoadRun.Step timedCycle(InterProcessLock lock, Recorder recorder) {
    return () -> {
      long start = System.nanoTime();
      lock.acquire();
      recorder.recordValue(System.nanoTime() - start);
      lock.release();
    };
  }
}
