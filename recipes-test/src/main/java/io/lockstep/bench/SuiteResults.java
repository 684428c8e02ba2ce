package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Everything one run of the suite measured, filled section by section on the suite's thread. */
final class SuiteResults {
  /**
   * A row of the uncontended table.
   *
   * @param recipe the recipe
   * @param paths K for a multi-lock, else 1
   */
  record Row(Recipe recipe, int paths) {
    String label() {
      return recipe.label(paths);
    }
  }

  /**
   * A JMH score.
   *
   * @param perSecond operations per second
   * @param error the half-width of JMH's 99.9% confidence interval (NaN if it could not tell)
   * @param allocatedBytes bytes allocated per operation in the benchmark's JVM, on all its threads
   *     (JMH's GC profiler, {@value JmhRuns#ALLOCATION_KEY}); NaN if not measured
   */
  record Score(double perSecond, double error, double allocatedBytes) {
    /** A score without an allocation figure. */
    Score(double perSecond, double error) {
      this(perSecond, error, Double.NaN);
    }
  }

  /** The uncontended rows in page order. */
  static final List<Row> UNCONTENDED_ROWS =
      List.of(
          new Row(Recipe.MUTEX, 1),
          new Row(Recipe.NON_REENTRANT_MUTEX, 1),
          new Row(Recipe.READ, 1),
          new Row(Recipe.WRITE, 1),
          new Row(Recipe.MULTI, 1),
          new Row(Recipe.MULTI, 4),
          new Row(Recipe.MULTI, 8),
          new Row(Recipe.MULTI, 16));

  /**
   * A JMH score of one uncontended row over the slow link.
   *
   * @param row the row
   * @param roundTrip the round trip the proxy added
   * @param library whose lock
   * @param score cycles per second
   */
  record LinkPoint(Row row, Duration roundTrip, Library library, Score score) {}

  /**
   * A JMH score of one uncontended row with or without a Flight Recording in the benchmark's JVM.
   *
   * @param row the row
   * @param library whose lock
   * @param recording whether a recording ran
   * @param score cycles per second
   * @param events Lockstep's events in the recording (0 without one)
   */
  record RecordingPoint(Row row, Library library, boolean recording, Score score, long events) {}

  /**
   * Lockstep's requests per uncontended cycle without and with a recording of its events running.
   *
   * @param without counted with no recording
   * @param with counted with a recording of Lockstep's events running in the counting JVM
   * @param events Lockstep's events that recording holds
   */
  record RecordingCount(CycleCost without, CycleCost with, long events) {}

  final Map<Row, Map<Library, CycleCost>> costs = new LinkedHashMap<>();
  final Map<Row, Map<Library, Score>> scores = new LinkedHashMap<>();
  final List<HandoffScenario.Result> handoffs = new ArrayList<>();
  final Map<ContentionScenario.ClientMode, Map<Contender, List<LoadResult>>> contention =
      new EnumMap<>(ContentionScenario.ClientMode.class);
  final Map<Double, List<LoadResult>> mixes = new TreeMap<>(Comparator.reverseOrder());
  final List<LoadResult> multi = new ArrayList<>();
  final List<LinkPoint> slowLink = new ArrayList<>();

  /** The median round trip of a small read, in ms, through the proxy at each added round trip. */
  final Map<Duration, Double> linkRoundTripMillis = new TreeMap<>();

  /** The same, straight to the server without the proxy; NaN if not measured. */
  double directRoundTripMillis = Double.NaN;

  /**
   * A contention point of the cohort section: {@link CohortScenario#THREADS} threads on one shared
   * client, through the proxy.
   *
   * @param roundTrip the round trip the proxy added
   * @param contender whose mutex
   * @param result the point
   */
  record CohortPoint(Duration roundTrip, Contender contender, LoadResult result) {}

  final List<CohortPoint> cohortRates = new ArrayList<>();
  final List<CohortScenario.Fairness> fairness = new ArrayList<>();
  final List<RecordingPoint> recording = new ArrayList<>();
  final Map<Row, RecordingCount> recordingCounts = new LinkedHashMap<>();
  final List<WaitersScenario.Result> waiters = new ArrayList<>();
  final List<WatchScenario.Result> watches = new ArrayList<>();
  final List<UnreachableScenario.Result> unreachable = new ArrayList<>();

  /**
   * When the uncontended rows ran (the {@code uncontended} section, the {@code multi} section or
   * both), so that their block can say its own run.
   *
   * @param started when the first row's counting began, as the page writes it
   * @param took from then to the last row's JMH score
   * @param loadBefore the load average before
   * @param loadAfter the load average after
   */
  record UncontendedRun(String started, Duration took, String loadBefore, String loadAfter) {}

  /** When the uncontended rows ran; null if none did. */
  UncontendedRun uncontendedRun;

  /** When the unreachable section ran; null if it did not. */
  UnreachableScenario.Run unreachableRun;

  /** Requests per uncontended acquire + return of each library's semaphore. */
  final Map<Library, CycleCost> semaphoreCosts = new EnumMap<>(Library.class);

  final List<SemaphoreScenario.Point> semaphore = new ArrayList<>();
  final List<ElectionScenario.Result> elections = new ArrayList<>();

  /** When the semaphore-election section ran, and with what; null if it did not. */
  SemaphoreElectionTables.Run semaphoreElectionRun;

  /** The lock caching section's run; null if it did not run. */
  LingerRuns.Run lingerRun;

  /** The keyed section's run and figures; null if it did not run. */
  KeyedTables.Run keyedRun;

  /** The fence section's run, or null. */
  FenceTables.Run fenceRun;

  /** The read sharing section's run, or null. */
  ReadShareScenario.Run readShareRun;

  /** The semaphore point of {@code library} under {@code load}, or null. */
  SemaphoreScenario.Point semaphore(Library library, SemaphoreScenario.Load load) {
    return semaphore.stream()
        .filter(p -> p.library() == library && p.load() == load)
        .findFirst()
        .orElse(null);
  }

  /** The election run of {@code library}, or null. */
  ElectionScenario.Result election(Library library) {
    return elections.stream().filter(r -> r.library() == library).findFirst().orElse(null);
  }

  /**
   * The drain of {@code library}'s queue of {@code waiters} with the median drain time over the
   * repeats, or null if none ran.
   */
  HandoffScenario.Result handoff(Library library, int waiters) {
    List<HandoffScenario.Result> runs =
        handoffs.stream()
            .filter(r -> r.library() == library && r.waiters() == waiters)
            .sorted(Comparator.comparingLong(HandoffScenario.Result::drainNanos))
            .toList();
    return runs.isEmpty() ? null : runs.get(runs.size() / 2);
  }

  /** The queue lengths measured, in increasing order. */
  List<Integer> queueLengths() {
    return handoffs.stream().map(HandoffScenario.Result::waiters).distinct().sorted().toList();
  }

  /** Records a contention point of {@code contender}. */
  void contention(ContentionScenario.ClientMode mode, Contender contender, LoadResult result) {
    contention
        .computeIfAbsent(mode, m -> new EnumMap<>(Contender.class))
        .computeIfAbsent(contender, c -> new ArrayList<>())
        .add(result);
  }

  /** The contention points of {@code contender} in {@code mode}, possibly none. */
  List<LoadResult> contention(ContentionScenario.ClientMode mode, Contender contender) {
    return contention.getOrDefault(mode, Map.of()).getOrDefault(contender, List.of());
  }

  /** The contention point of {@code contender} at {@code threads} threads, or null. */
  LoadResult contention(ContentionScenario.ClientMode mode, Contender contender, int threads) {
    return contention(mode, contender).stream()
        .filter(p -> p.threads() == threads)
        .findFirst()
        .orElse(null);
  }

  /** The slow-link score of {@code row} at {@code roundTrip} for {@code library}, or null. */
  Score slowLink(Row row, Duration roundTrip, Library library) {
    return slowLink.stream()
        .filter(p -> p.row().equals(row) && p.roundTrip().equals(roundTrip))
        .filter(p -> p.library() == library)
        .map(LinkPoint::score)
        .findFirst()
        .orElse(null);
  }

  /** The round trips the slow link was measured at, in increasing order. */
  List<Duration> roundTrips() {
    return slowLink.stream().map(LinkPoint::roundTrip).distinct().sorted().toList();
  }

  /** The rows measured over the slow link, in page order. */
  List<Row> slowLinkRows() {
    return UNCONTENDED_ROWS.stream()
        .filter(row -> slowLink.stream().anyMatch(p -> p.row().equals(row)))
        .toList();
  }

  /** The cohort section's point of {@code contender} at {@code roundTrip}, or null. */
  LoadResult cohortRate(Duration roundTrip, Contender contender) {
    return cohortRates.stream()
        .filter(p -> p.roundTrip().equals(roundTrip) && p.contender() == contender)
        .map(CohortPoint::result)
        .findFirst()
        .orElse(null);
  }

  /** The fairness run of {@code contender} at {@code roundTrip}, or null. */
  CohortScenario.Fairness fairness(Duration roundTrip, Contender contender) {
    return fairness.stream()
        .filter(f -> f.roundTrip().equals(roundTrip) && f.contender() == contender)
        .findFirst()
        .orElse(null);
  }

  /** The round trips the cohort section measured at, rates or fairness, in increasing order. */
  List<Duration> cohortRoundTrips() {
    return Stream.concat(
            cohortRates.stream().map(CohortPoint::roundTrip),
            fairness.stream().map(CohortScenario.Fairness::roundTrip))
        .distinct()
        .sorted()
        .toList();
  }

  /** The recording point of {@code row} for {@code library}, with or without, or null. */
  RecordingPoint recording(Row row, Library library, boolean withRecording) {
    return recording.stream()
        .filter(p -> p.row().equals(row) && p.library() == library)
        .filter(p -> p.recording() == withRecording)
        .findFirst()
        .orElse(null);
  }

  /** The rows measured with and without a recording, in page order. */
  List<Row> recordingRows() {
    return UNCONTENDED_ROWS.stream()
        .filter(row -> recording.stream().anyMatch(p -> p.row().equals(row)))
        .toList();
  }

  /** The many-waiters run of {@code library} at {@code waiters}, or null. */
  WaitersScenario.Result waiters(Library library, int count) {
    return waiters.stream()
        .filter(r -> r.library() == library && r.waiters() == count)
        .findFirst()
        .orElse(null);
  }

  /** The waiter counts measured, in increasing order. */
  List<Integer> waiterCounts() {
    return waiters.stream().map(WaitersScenario.Result::waiters).distinct().sorted().toList();
  }

  /** The watch-event run of {@code contender} in {@code mode}, or null. */
  WatchScenario.Result watches(ContentionScenario.ClientMode mode, Contender contender) {
    return watches.stream()
        .filter(r -> r.mode() == mode && r.contender() == contender)
        .findFirst()
        .orElse(null);
  }

  /** The point of {@code library} at {@code threads} threads, or null. */
  static LoadResult find(List<LoadResult> points, Library library, int threads) {
    return points.stream()
        .filter(p -> p.library() == library && p.threads() == threads)
        .findFirst()
        .orElse(null);
  }

  /** The first point of {@code library}, or null. */
  static LoadResult find(List<LoadResult> points, Library library) {
    return points.stream().filter(p -> p.library() == library).findFirst().orElse(null);
  }

  /** "95 / 5" for a read share of 0.95. */
  static String mixLabel(double share) {
    long reads = Math.round(share * 100);
    return reads + " / " + (100 - reads);
  }

  void cost(Row row, Library library, CycleCost cost) {
    costs.computeIfAbsent(row, r -> new EnumMap<>(Library.class)).put(library, cost);
  }

  void score(Row row, Library library, Score score) {
    scores.computeIfAbsent(row, r -> new EnumMap<>(Library.class)).put(library, score);
  }
}
