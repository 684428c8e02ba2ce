package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
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
    QUEUE_REREAD("queue reread");

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
    static final Evidence NONE =
        new Evidence(
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN);
  }

  /** One row of the throughput goal: ours divided by Curator's (higher is better). */
  record Row(String name, double ratio, Reason reason, Evidence evidence) {
    boolean met() {
      return ratio >= 1.0;
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
   * Every verdict of a run; a goal whose figures the run did not measure is null (or, for the
   * throughput rows, absent).
   */
  record Verdicts(
      RequestCount requests,
      List<Row> throughput,
      SpeedUp semaphore,
      SpeedUp multi,
      HandoffGrowth handoff) {}

  private GoalVerdicts() {}

  /** Judges every goal on {@code results}. */
  static Verdicts judge(SuiteResults results) {
    return new Verdicts(
        requests(results),
        throughput(results),
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
        handoff(results));
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

  /** The rows of the "at least Curator's throughput" goal, in page order. */
  static List<Row> throughput(SuiteResults results) {
    List<Row> rows = new ArrayList<>();
    for (SuiteResults.Row row : SuiteResults.UNCONTENDED_ROWS) {
      Map<Library, SuiteResults.Score> scores = results.scores.get(row);
      if (scores != null && scores.size() == 2) {
        rows.add(uncontended(row, scores, results.costs.get(row)));
      }
    }
    for (int n : results.queueLengths()) {
      HandoffScenario.Result curator = results.handoff(Library.CURATOR, n);
      HandoffScenario.Result ours = results.handoff(Library.LOCKSTEP, n);
      if (curator != null && ours != null) {
        rows.add(handoffRow(n, curator, ours));
      }
    }
    for (ClientMode mode : ClientMode.values()) {
      List<LoadResult> points = results.contention.getOrDefault(mode, List.of());
      for (LoadResult curator : points) {
        LoadResult ours = SuiteResults.find(points, Library.LOCKSTEP, curator.threads());
        if (curator.library() == Library.CURATOR && ours != null) {
          rows.add(
              loadRow("contention T = " + curator.threads() + ", " + mode.label(), curator, ours));
        }
      }
    }
    results.mixes.forEach(
        (share, points) -> {
          LoadResult curator = SuiteResults.find(points, Library.CURATOR);
          LoadResult ours = SuiteResults.find(points, Library.LOCKSTEP);
          if (curator != null && ours != null) {
            rows.add(loadRow("read-write mix " + SuiteResults.mixLabel(share), curator, ours));
          }
        });
    LoadResult curator = SuiteResults.find(results.multi, Library.CURATOR);
    LoadResult ours = SuiteResults.find(results.multi, Library.LOCKSTEP);
    if (curator != null && ours != null) {
      rows.add(loadRow("multi-lock contention", curator, ours));
    }
    return rows;
  }

  private static Row uncontended(
      SuiteResults.Row row,
      Map<Library, SuiteResults.Score> scores,
      Map<Library, CycleCost> costs) {
    SuiteResults.Score curatorScore = scores.get(Library.CURATOR);
    SuiteResults.Score oursScore = scores.get(Library.LOCKSTEP);
    double ratio = oursScore.perSecond() / curatorScore.perSecond();
    String name = "uncontended " + row.label();
    if (costs == null || costs.size() < 2) {
      Evidence errors =
          new Evidence(
              Double.NaN,
              Double.NaN,
              Double.NaN,
              Double.NaN,
              Double.NaN,
              Double.NaN,
              oursScore.error(),
              curatorScore.error());
      return new Row(name, ratio, Reason.NOT_COUNTED, errors);
    }
    CycleCost curator = costs.get(Library.CURATOR);
    CycleCost ours = costs.get(Library.LOCKSTEP);
    Evidence evidence =
        new Evidence(
            ours.requestsPerCycle(),
            curator.requestsPerCycle(),
            ours.writesPerCycle(),
            curator.writesPerCycle(),
            ours.responseBytesPerCycle(),
            curator.responseBytesPerCycle(),
            oursScore.error(),
            curatorScore.error());
    Reason reason;
    if (ours.requests() > curator.requests() || ours.writes() > curator.writes()) {
      reason = Reason.MORE_TRAFFIC;
    } else if (overlap(oursScore, curatorScore)) {
      reason = Reason.WITHIN_ERROR;
    } else {
      reason = Reason.CLIENT_TIME;
    }
    return new Row(name, ratio, reason, evidence);
  }

  /** Whether two JMH scores lie within each other's error bars (false if either has none). */
  static boolean overlap(SuiteResults.Score a, SuiteResults.Score b) {
    if (Double.isNaN(a.error()) || Double.isNaN(b.error())) {
      return false;
    }
    return a.perSecond() + a.error() >= b.perSecond() - b.error()
        && b.perSecond() + b.error() >= a.perSecond() - a.error();
  }

  private static Row handoffRow(
      int waiters, HandoffScenario.Result curator, HandoffScenario.Result ours) {
    boolean more =
        ours.requestsPerHandoff() > curator.requestsPerHandoff() * TRAFFIC_MARGIN
            || ours.responseBytesPerHandoff() > curator.responseBytesPerHandoff() * TRAFFIC_MARGIN;
    Evidence evidence =
        new Evidence(
            ours.requestsPerHandoff(),
            curator.requestsPerHandoff(),
            Double.NaN,
            Double.NaN,
            ours.responseBytesPerHandoff(),
            curator.responseBytesPerHandoff(),
            Double.NaN,
            Double.NaN);
    return new Row(
        "handoff N = " + waiters,
        curator.drainMillis() / ours.drainMillis(),
        more ? Reason.MORE_TRAFFIC : Reason.HANDOFF_CPU,
        evidence);
  }

  private static Row loadRow(String name, LoadResult curator, LoadResult ours) {
    boolean more =
        ours.requestsPerAcquisition() > curator.requestsPerAcquisition() * TRAFFIC_MARGIN;
    Evidence evidence =
        new Evidence(
            ours.requestsPerAcquisition(),
            curator.requestsPerAcquisition(),
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN,
            Double.NaN);
    return new Row(
        name,
        ours.perSecond() / curator.perSecond(),
        more ? Reason.MORE_TRAFFIC : Reason.SINGLE_LOAD_POINT,
        evidence);
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
      evidence =
          new Evidence(
              ours.requestsPerCycle(),
              curator.requestsPerCycle(),
              ours.writesPerCycle(),
              curator.writesPerCycle(),
              ours.responseBytesPerCycle(),
              curator.responseBytesPerCycle(),
              oursScore.error(),
              curatorScore.error());
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
