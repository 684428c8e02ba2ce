package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The goals of the benchmark page, judged from one run's figures: met or missed, and for each miss
 * the reason the figures point to. Pure: no I/O, no formatting; the page lays the verdicts out and
 * {@code docs/benchmarks.md} explains each {@link Reason} under its anchor.
 */
final class GoalVerdicts {
  /** Ours at the longest queue may take this much longer per handoff than at the shortest. */
  static final double HANDOFF_GROWTH_ALLOWED = 1.25;

  /** The speed-up over Curator's semaphore mutex aimed at. */
  static final double SEMAPHORE_GOAL = 2.0;

  /** The speed-up over Curator's multi-lock at {@link #MULTI_GOAL_PATHS} paths aimed at. */
  static final double MULTI_GOAL = 5.0;

  static final int MULTI_GOAL_PATHS = 8;

  /** Ours counts as sending more traffic than Curator's only beyond this factor. */
  static final double TRAFFIC_MARGIN = 1.05;

  /** The speed-up over Curator's mutex aimed at over the slow link's longest round trip. */
  static final double SLOW_LINK_GOAL = 1.3;

  /**
   * Draining many waiters of one client may take this much longer per waiter at the largest N than
   * at the smallest: at 1,000 and 10,000 waiters, 12 times as long in all.
   */
  static final double WAITERS_GROWTH_PER_WAITER = 1.2;

  /** Local handoff's speed-up over Curator aimed at, per added round trip (issue 13). */
  static final Map<Duration, Double> COHORT_GOALS =
      Map.of(Duration.ZERO, 5.0, Duration.ofMillis(1), 10.0);

  /** The handoff rows up to this queue length must be at least as fast as Curator's. */
  static final int HANDOFF_SPEED_MAX_WAITERS = 500;

  /** The client mode whose watch events per acquisition are judged: a client per thread. */
  static final ContentionScenario.ClientMode WATCH_GOAL_MODE = ContentionScenario.ClientMode.OWN;

  /** Why a goal or a row was missed; each has a paragraph in the docs page under its anchor. */
  enum Reason {
    /** More than 3 requests per uncontended cycle: deterministic, the library's behaviour. */
    MORE_THAN_THREE_REQUESTS("more than three requests"),
    /** Ours sends more requests, writes or bytes than Curator's on the row. */
    MORE_TRAFFIC("more traffic"),
    /** No more traffic, and the two JMH scores lie within each other's error. */
    WITHIN_ERROR("within error"),
    /** No more traffic, and the JMH scores are apart (or without error): time in the client. */
    CLIENT_TIME("client time"),
    /** The run counted no requests for the row, so it cannot say. */
    NOT_COUNTED("not counted"),
    /** No more traffic per handoff: the time went into threads and cores sharing the machine. */
    HANDOFF_CPU("handoff CPU"),
    /** No more requests per acquisition, and a load point is a single run. */
    SINGLE_LOAD_POINT("single load point"),
    /** A speed-up goal missed: the writes (each fsynced) bound the speed-up, not the requests. */
    WRITES_BOUND("writes bound"),
    /** Handoff time grew with the queue, and so did the bytes read per handoff. */
    QUEUE_REREAD("queue reread"),
    /** Over the slow link, ours waited for as many round trips per cycle as Curator's. */
    ROUND_TRIPS("round trips"),
    /** More watch events than Curator's, some of them child events. */
    CHILD_WATCHES("child watches"),
    /** More watch events than Curator's, all data events: the holder's watch on its own node. */
    HOLDER_WATCH("holder watch"),
    /** Slower with a recording, but Curator's rows slowed down as much: the recording's cost. */
    RECORDING_OVERHEAD("recording overhead"),
    /** Ours allocated more bytes per uncontended cycle than Curator's in the benchmark's JVM. */
    MORE_ALLOCATION("more allocation");

    private final String label;

    Reason(String label) {
      this.label = label;
    }

    /** The reason's name: the heading of the paragraph that explains it in the docs page. */
    String label() {
      return label;
    }

    /** The anchor of that heading, as GitHub makes it: lower case, spaces as hyphens. */
    String anchor() {
      return label.toLowerCase(Locale.ROOT).replace(' ', '-');
    }
  }

  /**
   * The figures behind a verdict, ours and Curator's, NaN where the row has none.
   *
   * @param requests requests per cycle, handoff or acquisition
   * @param writes write requests per cycle
   * @param bytes response bytes per cycle or handoff
   * @param error JMH's error half-width
   */
  record Evidence(
      double requests,
      double curatorRequests,
      double writes,
      double curatorWrites,
      double bytes,
      double curatorBytes,
      double error,
      double curatorError) {
    static final Evidence NONE = requests(Double.NaN, Double.NaN);

    /** A counted cycle of each library, with the JMH scores' errors. */
    static Evidence of(
        CycleCost ours,
        CycleCost curator,
        SuiteResults.Score oursScore,
        SuiteResults.Score curatorScore) {
      return new Evidence(
          ours.requestsPerCycle(),
          curator.requestsPerCycle(),
          ours.writesPerCycle(),
          curator.writesPerCycle(),
          ours.responseBytesPerCycle(),
          curator.responseBytesPerCycle(),
          oursScore.error(),
          curatorScore.error());
    }

    /** Requests only, as a load point counts them. */
    static Evidence requests(double requests, double curatorRequests) {
      return new Evidence(
          requests,
          curatorRequests,
          Double.NaN,
          Double.NaN,
          Double.NaN,
          Double.NaN,
          Double.NaN,
          Double.NaN);
    }
  }

  /** One row of the throughput goal: ours divided by Curator's (higher is better). */
  record Row(String name, double ratio, Reason reason, Evidence evidence) {
    boolean met() {
      return ratio >= 1.0;
    }
  }

  /**
   * One row of the allocation goal: the bytes the benchmark's JVM allocated per uncontended cycle,
   * on all its threads, ours and Curator's.
   */
  record AllocationRow(String name, double bytes, double curatorBytes) {
    boolean met() {
      return bytes <= curatorBytes;
    }
  }

  /** The request-count goal: rows counted, and the rows where ours sent more than 3 a cycle. */
  record RequestCount(int rows, Map<String, Double> over) {
    boolean met() {
      return over.isEmpty();
    }
  }

  /** A speed-up goal: at least {@code target} times Curator's throughput on {@code what}. */
  record SpeedUp(String what, double target, double speedUp, Reason reason, Evidence evidence) {
    boolean met() {
      return speedUp >= target;
    }
  }

  /**
   * The handoff goal: ours per handoff at the longest queue against the shortest.
   *
   * @param shortest the drain at the shortest queue, ours
   * @param longest the drain at the longest queue, ours
   */
  record HandoffGrowth(
      HandoffScenario.Result shortest, HandoffScenario.Result longest, Reason reason) {
    double growth() {
      return longest.handoffMicros() / shortest.handoffMicros();
    }

    boolean met() {
      return growth() <= HANDOFF_GROWTH_ALLOWED;
    }
  }

  /**
   * The slow-link goal: ours against Curator's mutex at the longest round trip measured.
   *
   * @param roundTrip the round trip the proxy added
   * @param speedUp ours divided by Curator's cycles per second
   * @param roundTrips the round trips ours waited for per cycle, estimated from the run
   * @param curatorRoundTrips the same for Curator's
   */
  record LinkSpeedUp(
      Duration roundTrip,
      double speedUp,
      double roundTrips,
      double curatorRoundTrips,
      Reason reason) {
    boolean met() {
      return speedUp >= SLOW_LINK_GOAL;
    }
  }

  /** The many-waiters goal: ours draining the largest N against the smallest. */
  record WaitersGrowth(
      WaitersScenario.Result shortest, WaitersScenario.Result longest, Reason reason) {
    double growth() {
      return longest.drainMillis() / shortest.drainMillis();
    }

    /** The growth allowed: 12× from 1,000 to 10,000 waiters. */
    double allowed() {
      return WAITERS_GROWTH_PER_WAITER * longest.waiters() / shortest.waiters();
    }

    boolean met() {
      return growth() <= allowed();
    }
  }

  /** The watch-event goal: ours per acquisition at most Curator's. */
  record WatchGoal(WatchScenario.Result curator, WatchScenario.Result ours, Reason reason) {
    boolean met() {
      return ours.watchesPerAcquisition() <= curator.watchesPerAcquisition();
    }
  }

  /**
   * One row of the Flight Recorder goal: a library's cycles per second with a recording divided by
   * without.
   *
   * @param withinError whether the two scores lie within each other's JMH error
   * @param curatorRatio the same ratio for Curator's lock, the control
   */
  record RecordingRow(
      String name, double ratio, double curatorRatio, boolean withinError, Reason reason) {
    boolean met() {
      return withinError || ratio >= 1.0;
    }
  }

  /**
   * Every verdict of a run; a goal whose figures the run did not measure is null (or, for lists of
   * rows, empty).
   *
   * @param allocation the single-path uncontended rows with both libraries' allocation figures
   * @param zeroDelay the uncontended rows straight to the server and through the proxy at 0 ms
   * @param handoffSpeed the handoff rows up to {@link #HANDOFF_SPEED_MAX_WAITERS}
   * @param cohort local handoff against Curator, one goal per round trip measured
   */
  record Verdicts(
      RequestCount requests,
      List<AllocationRow> allocation,
      List<Row> throughput,
      SpeedUp semaphore,
      SpeedUp multi,
      HandoffGrowth handoff,
      List<Row> zeroDelay,
      LinkSpeedUp slowLink,
      List<Row> handoffSpeed,
      WaitersGrowth waiters,
      WatchGoal watches,
      List<RecordingRow> recording,
      List<SpeedUp> cohort) {}

  private GoalVerdicts() {}

  /** Judges every goal on {@code results}. */
  static Verdicts judge(SuiteResults results) {
    List<Row> throughput = ThroughputRows.of(results);
    return new Verdicts(
        requests(results),
        allocation(results),
        throughput,
        speedUp(
            results,
            new SuiteResults.Row(Recipe.NON_REENTRANT_MUTEX, 1),
            SEMAPHORE_GOAL,
            "semaphore mutex"),
        speedUp(
            results,
            new SuiteResults.Row(Recipe.MULTI, MULTI_GOAL_PATHS),
            MULTI_GOAL,
            "multi-lock at K = " + MULTI_GOAL_PATHS),
        handoff(results),
        ServiceGoals.zeroDelay(results),
        ServiceGoals.slowLink(results),
        ServiceGoals.handoffSpeed(results),
        ServiceGoals.waiters(results),
        ServiceGoals.watches(results),
        ServiceGoals.recording(results),
        ServiceGoals.cohort(results));
  }

  private static RequestCount requests(SuiteResults results) {
    Map<String, Double> over = new LinkedHashMap<>();
    int counted = 0;
    for (var entry : results.costs.entrySet()) {
      CycleCost ours = entry.getValue().get(Library.LOCKSTEP);
      if (ours != null) {
        counted++;
        if (ours.requests() != 3L * ours.cycles()) {
          over.put(entry.getKey().label(), ours.requestsPerCycle());
        }
      }
    }
    return counted == 0 ? null : new RequestCount(counted, over);
  }

  private static List<AllocationRow> allocation(SuiteResults results) {
    List<AllocationRow> rows = new ArrayList<>();
    for (SuiteResults.Row row : SuiteSettings.SINGLE_PATH_ROWS) {
      Map<Library, SuiteResults.Score> scores = results.scores.getOrDefault(row, Map.of());
      SuiteResults.Score curator = scores.get(Library.CURATOR);
      SuiteResults.Score ours = scores.get(Library.LOCKSTEP);
      if (curator != null
          && ours != null
          && !Double.isNaN(curator.allocatedBytes())
          && !Double.isNaN(ours.allocatedBytes())) {
        rows.add(new AllocationRow(row.label(), ours.allocatedBytes(), curator.allocatedBytes()));
      }
    }
    return rows;
  }

  private static SpeedUp speedUp(
      SuiteResults results, SuiteResults.Row row, double target, String what) {
    Map<Library, SuiteResults.Score> scores = results.scores.get(row);
    if (scores == null || scores.size() < 2) {
      return null;
    }
    SuiteResults.Score curatorScore = scores.get(Library.CURATOR);
    SuiteResults.Score oursScore = scores.get(Library.LOCKSTEP);
    Map<Library, CycleCost> costs = results.costs.get(row);
    Evidence evidence = Evidence.NONE;
    Reason reason = Reason.NOT_COUNTED;
    if (costs != null && costs.size() == 2) {
      CycleCost curator = costs.get(Library.CURATOR);
      CycleCost ours = costs.get(Library.LOCKSTEP);
      evidence = Evidence.of(ours, curator, oursScore, curatorScore);
      reason = Reason.WRITES_BOUND;
    }
    return new SpeedUp(
        what, target, oursScore.perSecond() / curatorScore.perSecond(), reason, evidence);
  }

  private static HandoffGrowth handoff(SuiteResults results) {
    List<Integer> lengths = results.queueLengths();
    if (lengths.size() < 2) {
      return null;
    }
    HandoffScenario.Result shortest = results.handoff(Library.LOCKSTEP, lengths.get(0));
    HandoffScenario.Result longest =
        results.handoff(Library.LOCKSTEP, lengths.get(lengths.size() - 1));
    if (shortest == null || longest == null) {
      return null;
    }
    Reason reason =
        longest.responseBytesPerHandoff() >= 2 * shortest.responseBytesPerHandoff()
            ? Reason.QUEUE_REREAD
            : Reason.HANDOFF_CPU;
    return new HandoffGrowth(shortest, longest, reason);
  }
}
