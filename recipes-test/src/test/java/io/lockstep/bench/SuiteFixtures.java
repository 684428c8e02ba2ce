package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  /** A many-waiters run of {@code waiters} draining in {@code drainMillis}. */
  static WaitersScenario.Result waiters(
      Library library, int waiters, double drainMillis, long bytesPerWaiter) {
    Map<String, String> values = new HashMap<>();
    values.put("queueNanos", String.valueOf(waiters * 100_000L));
    values.put("drainNanos", String.valueOf((long) (drainMillis * 1e6)));
    values.put("heapBefore", "10000000");
    values.put("heapQueued", String.valueOf(10_000_000L + 2_000L * waiters));
    values.put("threadsBefore", "10");
    values.put("threadsQueued", String.valueOf(library == Library.CURATOR ? 10 + waiters : 12));
    values.put("threadsPeak", String.valueOf(library == Library.CURATOR ? 11 + waiters : 14));
    values.put("requests", String.valueOf(2L * waiters));
    values.put("responseBytes", String.valueOf(bytesPerWaiter * waiters));
    if (library == Library.LOCKSTEP) {
      values.put("inOrder", "true");
    }
    return new WaitersScenario.Result(library, waiters, true, values);
  }

  /** A watch-event run of 8 threads, 100 acquisitions each, with the events per acquisition. */
  static WatchScenario.Result watches(
      Contender contender,
      ContentionScenario.ClientMode mode,
      double deleted,
      double children,
      double changed) {
    long acquisitions = 800;
    ServerCounters.Traffic traffic =
        new ServerCounters.Traffic(
            3 * acquisitions,
            2 * acquisitions,
            acquisitions,
            300 * acquisitions,
            Math.round(deleted * acquisitions),
            Math.round(children * acquisitions),
            Math.round(changed * acquisitions));
    return new WatchScenario.Result(contender, mode, 8, acquisitions, traffic);
  }

  /** Slow-link scores of the mutex: {@code cycles per second} at 0 and 1 ms for both libraries. */
  static void slowLink(
      SuiteResults results,
      double curatorAtZero,
      double oursAtZero,
      double curatorAtOne,
      double oursAtOne) {
    SuiteResults.Row mutex = new SuiteResults.Row(io.lockstep.testing.Recipe.MUTEX, 1);
    Duration one = Duration.ofMillis(1);
    results.slowLink.add(
        new SuiteResults.LinkPoint(mutex, Duration.ZERO, Library.CURATOR, score(curatorAtZero)));
    results.slowLink.add(
        new SuiteResults.LinkPoint(mutex, Duration.ZERO, Library.LOCKSTEP, score(oursAtZero)));
    results.slowLink.add(
        new SuiteResults.LinkPoint(mutex, one, Library.CURATOR, score(curatorAtOne)));
    results.slowLink.add(
        new SuiteResults.LinkPoint(mutex, one, Library.LOCKSTEP, score(oursAtOne)));
    results.linkRoundTripMillis.put(Duration.ZERO, 0.3);
    results.linkRoundTripMillis.put(one, 1.3);
    results.directRoundTripMillis = 0.1;
  }

  /** Recording points of the mutex, each library without and with, errors of 10. */
  static void recording(
      SuiteResults results, double oursOff, double oursOn, double curatorOff, double curatorOn) {
    SuiteResults.Row mutex = new SuiteResults.Row(io.lockstep.testing.Recipe.MUTEX, 1);
    results.recording.add(
        new SuiteResults.RecordingPoint(mutex, Library.LOCKSTEP, false, score(oursOff), 0));
    results.recording.add(
        new SuiteResults.RecordingPoint(mutex, Library.LOCKSTEP, true, score(oursOn), 2_000));
    results.recording.add(
        new SuiteResults.RecordingPoint(mutex, Library.CURATOR, false, score(curatorOff), 0));
    results.recording.add(
        new SuiteResults.RecordingPoint(mutex, Library.CURATOR, true, score(curatorOn), 0));
    results.recordingCounts.put(
        mutex, new SuiteResults.RecordingCount(cost(3, 2, 250), cost(3, 2, 250), 20));
  }

  static SuiteResults.Score score(double perSecond) {
    return new SuiteResults.Score(perSecond, 10);
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
      results.score(row, Library.CURATOR, new SuiteResults.Score(100, 5, 5_000));
      results.score(row, Library.LOCKSTEP, new SuiteResults.Score(1_000, 5, 4_000));
    }
    results.uncontendedRun = uncontendedRun();
    for (int n : List.of(100, 2000)) {
      results.handoffs.add(drain(Library.CURATOR, n, 1_000, 3_000));
      results.handoffs.add(drain(Library.LOCKSTEP, n, 900, 3_000));
    }
    for (ContentionScenario.ClientMode mode : ContentionScenario.ClientMode.values()) {
      for (int threads : SuiteSettings.quick().threadCounts()) {
        results.contention(mode, Contender.CURATOR, load(Library.CURATOR, threads, 1_000, 3));
        results.contention(mode, Contender.LOCKSTEP, load(Library.LOCKSTEP, threads, 1_100, 3));
      }
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
    slowLink(results, 800, 900, 250, 350);
    recording(results, 1_000, 995, 1_000, 990);
    results.waiters.add(waiters(Library.CURATOR, 1_000, 2_000, 40_000));
    results.waiters.add(waiters(Library.LOCKSTEP, 1_000, 1_000, 300));
    results.waiters.add(waiters(Library.LOCKSTEP, 10_000, 11_000, 300));
    for (ContentionScenario.ClientMode mode : ContentionScenario.ClientMode.values()) {
      results.watches.add(watches(Contender.CURATOR, mode, 0.9, 0, 0));
      results.watches.add(watches(Contender.LOCKSTEP, mode, 0.8, 0, 0));
    }
    cohort(results, Duration.ZERO, 1_000, 6_000);
    cohort(results, Duration.ofMillis(1), 200, 2_400);
    unreachable(results, UnreachableScenario.Fault.CUT, 1, 2, 3);
    unreachable(results, UnreachableScenario.Fault.BLACKHOLE, 201, 205, 240);
    semaphoreElection(results);
    keyed(results);
    fence(results);
    return results;
  }

  /** When the uncontended rows ran, on a machine not shared. */
  static SuiteResults.UncontendedRun uncontendedRun() {
    return new SuiteResults.UncontendedRun(
        "2026-01-05T00:00:00 UTC",
        Duration.ofMinutes(2),
        "0.50 / 0.40 / 0.30",
        "0.60 / 0.40 / 0.30");
  }

  /** A keyed section run: each variant one client and contended. */
  static void keyed(SuiteResults results) {
    java.util.List<KeyedScenario.Result> figures = new java.util.ArrayList<>();
    for (KeyedScenario.Variant variant : KeyedScenario.Variant.values()) {
      figures.add(new KeyedScenario.Result(variant, 1, 1_000, 1_000, 2.0, 900, 1_000, 700));
      figures.add(new KeyedScenario.Result(variant, 4, 100, 400, 1.0, -1, 100, 3));
    }
    results.keyedRun =
        new KeyedTables.Run(
            "2026-01-04T00:00:00 UTC", Duration.ofMinutes(2), "0.1", "0.2", 1_000, 100, figures);
  }

  /** A fence section run: every database and admission, H2 at 10 µs bare and 12 admitted. */
  static void fence(SuiteResults results) {
    java.util.List<FenceTables.Point> points = new java.util.ArrayList<>();
    for (FenceAdmitBenchmark.Database database : FenceAdmitBenchmark.Database.values()) {
      for (FenceAdmitBenchmark.Admission admission : FenceAdmitBenchmark.Admission.values()) {
        double bare = database == FenceAdmitBenchmark.Database.H2 ? 10 : 1_000;
        points.add(
            new FenceTables.Point(
                database,
                admission,
                admission == FenceAdmitBenchmark.Admission.NONE ? bare : bare * 1.2,
                0.5));
      }
    }
    results.fenceRun =
        new FenceTables.Run(
            "2026-01-06T00:00:00 UTC",
            Duration.ofMinutes(3),
            "0.1",
            "0.2",
            "3 warm-up and 5 measured iterations of 2 s, 1 fork",
            "17.5",
            "2.5.252",
            points);
  }

  /**
   * The semaphore-election section: Curator's semaphore at 7 requests a cycle and 500 cycles/s,
   * ours at 3 and 600; under contention 100 against 200 leases/s; handoffs 200 against 250/s; and
   * the section's run line.
   */
  static void semaphoreElection(SuiteResults results) {
    results.semaphoreCosts.put(Library.CURATOR, cost(7, 4, 700));
    results.semaphoreCosts.put(Library.LOCKSTEP, cost(3, 2, 340));
    results.semaphore.add(lease(Library.CURATOR, SemaphoreScenario.Load.UNCONTENDED, 500, 7, 1));
    results.semaphore.add(lease(Library.LOCKSTEP, SemaphoreScenario.Load.UNCONTENDED, 600, 3, 1));
    results.semaphore.add(lease(Library.CURATOR, SemaphoreScenario.Load.CONTENDED, 100, 9, 2));
    results.semaphore.add(
        lease(Library.LOCKSTEP, SemaphoreScenario.Load.CONTENDED, 200, 4.5, 0.25));
    results.elections.add(election(Library.CURATOR, 200, 1));
    results.elections.add(election(Library.LOCKSTEP, 250, 2));
    results.semaphoreElectionRun =
        new SemaphoreElectionTables.Run(
            "2026-01-03T00:00:00 UTC",
            Duration.ofMinutes(1),
            "0.50 / 0.40 / 0.30",
            "0.60 / 0.40 / 0.30",
            4,
            20,
            4,
            4,
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            5,
            10,
            100);
    Histogram turn = new Histogram(3);
    turn.recordValue(2_000_000);
    results.lingerRun =
        new LingerRuns.Run(
            "2026-01-04T00:00:00 UTC",
            Duration.ofMinutes(1),
            "0.50 / 0.40 / 0.30",
            "0.60 / 0.40 / 0.30",
            List.of(
                new LingerRuns.Loop(Duration.ZERO, LingerRuns.Series.CURATOR, 500, 3),
                new LingerRuns.Loop(Duration.ZERO, LingerRuns.Series.LINGER, 1_000_000, 0)),
            List.of(
                new LingerRuns.Alternation(
                    Duration.ZERO,
                    LingerRuns.Series.LINGER,
                    LingerRuns.Series.CURATOR,
                    false,
                    turn,
                    6,
                    250)));
  }

  /** A semaphore point at {@code perSecond} leases, acquire latency 2 ms. */
  static SemaphoreScenario.Point lease(
      Library library,
      SemaphoreScenario.Load load,
      double perSecond,
      double requests,
      double watches) {
    int clients = load == SemaphoreScenario.Load.CONTENDED ? 4 : 1;
    return new SemaphoreScenario.Point(
        library,
        load,
        clients,
        clients,
        4,
        load(library, clients * clients, perSecond, requests),
        watches,
        Math.min(4, clients));
  }

  /** 100 handoffs among 5 participants at {@code perSecond}, 3 ms each, 6 requests each. */
  static ElectionScenario.Result election(Library library, double perSecond, long watches) {
    int handoffs = 100;
    ServerCounters.Traffic traffic =
        new ServerCounters.Traffic(
            6L * handoffs, 2L * handoffs, 4L * handoffs, 500L * handoffs, watches * handoffs, 0, 0);
    return new ElectionScenario.Result(
        library, 5, handoffs, handoffs / perSecond, histogram(3_000_000), traffic);
  }

  /**
   * A Lockstep row of the unreachable section, {@code acquire(1 s)} on a mutex, whose 100 trials
   * overran by {@code p50} ms up to the 50th, {@code p99} up to the 99th and {@code max} in the
   * last; and the section's run line, if not there yet.
   */
  static void unreachable(
      SuiteResults results, UnreachableScenario.Fault fault, long p50, long p99, long max) {
    List<Long> overruns = new ArrayList<>();
    for (int i = 1; i <= 100; i++) {
      overruns.add((i <= 50 ? p50 : i <= 99 ? p99 : max) * 1_000_000);
    }
    results.unreachable.add(
        new UnreachableScenario.Result(
            "`acquire(1 s)`",
            "`ReentrantMutex`",
            Library.LOCKSTEP,
            fault,
            Duration.ofSeconds(1),
            overruns,
            Map.of("LockUnreachableException", 100)));
    if (results.unreachableRun == null) {
      results.unreachableRun =
          new UnreachableScenario.Run(
              "2026-01-02T00:00:00 UTC",
              Duration.ofMinutes(12),
              "1.50 / 1.00 / 1.00",
              "2.00 / 1.50 / 1.00",
              100,
              3,
              3);
    }
  }

  /**
   * The cohort section at {@code roundTrip}: Curator's, plain Lockstep's and local handoff's rates,
   * and a fairness run of local handoff whose outsider waited 8 holds at most.
   */
  static void cohort(SuiteResults results, Duration roundTrip, double curator, double handoff) {
    int threads = CohortScenario.THREADS;
    results.cohortRates.add(
        new SuiteResults.CohortPoint(
            roundTrip, Contender.CURATOR, load(Library.CURATOR, threads, curator, 3)));
    results.cohortRates.add(
        new SuiteResults.CohortPoint(
            roundTrip, Contender.LOCKSTEP, load(Library.LOCKSTEP, threads, curator * 1.1, 3)));
    results.cohortRates.add(
        new SuiteResults.CohortPoint(
            roundTrip,
            Contender.LOCKSTEP_LOCAL_HANDOFF,
            load(Library.LOCKSTEP, threads, handoff, 0.4)));
    Histogram holds = new Histogram(3);
    holds.recordValue(8);
    results.fairness.add(
        new CohortScenario.Fairness(
            roundTrip,
            Contender.LOCKSTEP_LOCAL_HANDOFF,
            threads,
            10,
            900,
            histogram(3_000_000),
            holds,
            0,
            0));
  }
}
