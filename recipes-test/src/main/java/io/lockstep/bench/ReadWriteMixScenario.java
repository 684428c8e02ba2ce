package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.util.List;
import java.util.SplittableRandom;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Read-heavy mixes on one read-write lock ({@code InterProcessReadWriteLock} against {@code
 * ReadWriteMutex}): T threads, each acquiring the read lock with probability r (0.95 and 0.50 in
 * the suite) and the write lock otherwise.
 *
 * <p><b>Workload.</b> Each thread has a client of its own and a read lock and a write lock object
 * on the shared path; it draws read or write from a random sequence seeded by its index (the same
 * sequence for both libraries), times the acquire, and releases at once. After a warm-up period, a
 * measured period records acquisitions per second and the acquire latency of reads and writes with
 * HdrHistogram, and from {@code mntr} the requests per acquisition.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only rw"
 * </pre>
 */
final class ReadWriteMixScenario {
  private ReadWriteMixScenario() {}

  static LoadResult run(
      ServerProbe probe,
      String connectString,
      SuiteSettings settings,
      Library library,
      double readShare)
      throws Exception {
    int threads = settings.mixThreads();
    String path = Paths.unique("rw-" + Math.round(readShare * 100));
    try (Clients clients = new Clients(connectString, threads)) {
      BenchZooKeeper.createDirectories(clients.get(0), List.of(path));
      Recorder reads = LoadRun.newRecorder();
      Recorder writes = LoadRun.newRecorder();
      return LoadRun.measure(
          probe,
          settings,
          library,
          threads,
          List.of(reads, writes),
          i -> {
            InterProcessLock read = Recipe.READ.newLock(library, clients.get(i), path, 1);
            InterProcessLock write = Recipe.WRITE.newLock(library, clients.get(i), path, 1);
            LoadRun.Step readCycle = ContentionScenario.timedCycle(read, reads);
            LoadRun.Step writeCycle = ContentionScenario.timedCycle(write, writes);
            SplittableRandom random = new SplittableRandom(i);
            return () -> {
              if (random.nextDouble() < readShare) {
                readCycle.run();
              } else {
                writeCycle.run();
              }
            };
          });
    }
  }
}
