package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Multi-locks under contention with overlapping path sets ({@code InterProcessMultiLock} against
 * {@code MultiMutex}): T threads each lock K of P shared paths at a time (T = 8, K = 4, P = 16 in
 * the suite), so most pairs of acquisitions share a path.
 *
 * <p><b>Workload.</b> Each thread has a client of its own and 8 multi-lock objects, each over K
 * paths drawn at random from the P (seeded by the thread's index, the same sets for both
 * libraries). It repeats: pick one of its multi-locks at random, time the acquire, release at once.
 * Every set lists its paths in one global (sorted) order: Curator's multi-lock takes the paths one
 * after the other and would deadlock on sets listed in different orders; {@code MultiMutex} does
 * not need the order. After a warm-up period, a measured period records acquisitions per second and
 * acquire latency with HdrHistogram, and from {@code mntr} the requests per acquisition.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only multicontention"
 * </pre>
 */
final class MultiLockContentionScenario {
  private static final int SETS_PER_THREAD = 8;

  private MultiLockContentionScenario() {}

  static LoadResult run(
      ServerProbe probe, String connectString, SuiteSettings settings, Library library)
      throws Exception {
    int threads = settings.multiThreads();
    List<String> allPaths = Recipe.MULTI.lockPaths(Paths.unique("multi"), settings.multiPaths());
    try (Clients clients = new Clients(connectString, threads)) {
      BenchZooKeeper.createDirectories(clients.get(0), allPaths);
      Recorder recorder = LoadRun.newRecorder();
      return LoadRun.measure(
          probe,
          settings,
          library,
          threads,
          List.of(recorder),
          i -> {
            SplittableRandom random = new SplittableRandom(i);
            List<LoadRun.Step> cycles = new ArrayList<>();
            for (int s = 0; s < SETS_PER_THREAD; s++) {
              List<String> set = pathSet(allPaths, settings.multiK(), random);
              InterProcessLock lock =
                  library.multiLock(clients.get(i), set.stream().map(LockPart::mutex).toList());
              cycles.add(ContentionScenario.timedCycle(lock, recorder));
            }
            return () -> cycles.get(random.nextInt(cycles.size())).run();
          });
    }
  }

  /** K distinct paths drawn from {@code paths}, in sorted order. */
  private static List<String> pathSet(List<String> paths, int k, SplittableRandom random) {
    List<String> shuffled = new ArrayList<>(paths);
    for (int i = shuffled.size() - 1; i > 0; i--) {
      Collections.swap(shuffled, i, random.nextInt(i + 1));
    }
    List<String> set = new ArrayList<>(shuffled.subList(0, k));
    Collections.sort(set);
    return set;
  }
}
