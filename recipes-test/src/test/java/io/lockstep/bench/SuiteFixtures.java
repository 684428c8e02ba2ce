package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/** Results of a suite run made up by hand, for the page's tests: no server, no timing. */
final class SuiteFixtures {
  static final MachineInfo MACHINE =
      new MachineInfo("Test CPU", 2, 8.0, "Linux", "Test JVM", "3.9.3", "5.9.0");

  private SuiteFixtures() {}

  static CycleCost cost(long requestsPerCycle, long writesPerCycle, long bytesPerCycle) {
    return new CycleCost(10, 10 * requestsPerCycle, 10 * writesPerCycle, 10 * bytesPerCycle);
  }

  /** A drain of {@code waiters} taking {@code micros} per handoff, 2 requests each. */
  static HandoffScenario.Result drain(
      Library library, int waiters, double micros, long bytesPerHandoff) {
    Histogram gaps = histogram(1_000_000);
    ServerCounters.Traffic traffic =
        new ServerCounters.Traffic(
            2L * waiters, waiters, waiters, bytesPerHandoff * waiters, waiters + 1, 0, 0);
    return new HandoffScenario.Result(
        library, waiters, 10, (long) (micros * 1_000 * waiters), gaps, traffic, 1);
  }

  static LoadResult load(Library library, int threads, double perSecond, double requests) {
    return new LoadResult(library, threads, perSecond, histogram(2_000_000), List.of(), requests);
  }

  static Histogram histogram(long nanos) {
    Histogram histogram = new Histogram(3);
    histogram.recordValue(nanos);
    return histogram;
  }

  static BenchmarkPage page(SuiteResults results) {
    return new BenchmarkPage(
        SuiteSettings.quick(),
        MACHINE,
        results,
        "mvn -B -Pbench verify",
        "2026-01-01T00:00:00 UTC",
        Duration.ofMinutes(3),
        "0.10 / 0.20 / 0.30",
        "1.00 / 0.50 / 0.40");
  }

  /** A run of every section where ours beats Curator everywhere. */
  static SuiteResults everyGoalMet() {
    SuiteResults results = new SuiteResults();
    for (SuiteResults.Row row : SuiteResults.UNCONTENDED_ROWS) {
      long curatorRequests =
          row.recipe() == io.lockstep.testing.Recipe.MULTI ? 3L * row.paths() : 3;
      results.cost(row, Library.CURATOR, cost(curatorRequests, 2, 300));
      results.cost(row, Library.LOCKSTEP, cost(3, 2, 250));
      results.score(row, Library.CURATOR, new SuiteResults.Score(100, 5));
      results.score(row, Library.LOCKSTEP, new SuiteResults.Score(1_000, 5));
    }
    for (int n : List.of(100, 2000)) {
      results.handoffs.add(drain(Library.CURATOR, n, 1_000, 3_000));
      results.handoffs.add(drain(Library.LOCKSTEP, n, 900, 3_000));
    }
    for (ContentionScenario.ClientMode mode : ContentionScenario.ClientMode.values()) {
      List<LoadResult> points = new ArrayList<>();
      for (int threads : SuiteSettings.quick().threadCounts()) {
        points.add(load(Library.CURATOR, threads, 1_000, 3));
        points.add(load(Library.LOCKSTEP, threads, 1_100, 3));
      }
      results.contention.put(mode, points);
    }
    int mixThreads = SuiteSettings.quick().mixThreads();
    results.mixes.put(
        0.95,
        List.of(
            load(Library.CURATOR, mixThreads, 1_000, 3),
            load(Library.LOCKSTEP, mixThreads, 1_200, 3)));
    int multiThreads = SuiteSettings.quick().multiThreads();
    results.multi.add(load(Library.CURATOR, multiThreads, 400, 14));
    results.multi.add(load(Library.LOCKSTEP, multiThreads, 1_400, 6));
    return results;
  }
}
