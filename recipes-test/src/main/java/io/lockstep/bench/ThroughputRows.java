package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.bench.GoalVerdicts.Evidence;
import io.lockstep.bench.GoalVerdicts.Reason;
import io.lockstep.bench.GoalVerdicts.Row;
import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The rows of the goal "at least Curator's throughput on every row", judged from one run: ours
 * divided by Curator's, and for a slower row the reason its figures point to. Pure, like {@link
 * GoalVerdicts}.
 */
final class ThroughputRows {
  private ThroughputRows() {}

  /** The rows of the "at least Curator's throughput" goal, in page order. */
  static List<Row> of(SuiteResults results) {
    List<Row> rows = new ArrayList<>(uncontended(results));
    for (Duration roundTrip : results.roundTrips()) {
      rows.addAll(slowLink(results, roundTrip));
    }
    rows.addAll(handoff(results, Integer.MAX_VALUE));
    for (ClientMode mode : ClientMode.values()) {
      for (Contender challenger : Contender.challengers(mode)) {
        for (LoadResult curator : results.contention(mode, Contender.CURATOR)) {
          LoadResult ours = results.contention(mode, challenger, curator.threads());
          if (ours != null) {
            String name = "contention T = " + curator.threads() + ", " + mode.label();
            if (challenger != Contender.LOCKSTEP) {
              name += ", " + challenger.label();
            }
            rows.add(loadRow(name, curator, ours));
          }
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

  /** The uncontended rows, straight to the server. */
  static List<Row> uncontended(SuiteResults results) {
    List<Row> rows = new ArrayList<>();
    for (SuiteResults.Row row : SuiteResults.UNCONTENDED_ROWS) {
      Map<Library, SuiteResults.Score> scores = results.scores.get(row);
      if (scores != null && scores.size() == 2) {
        rows.add(
            uncontended(
                "uncontended " + row.label(),
                scores.get(Library.CURATOR),
                scores.get(Library.LOCKSTEP),
                results.costs.get(row)));
      }
    }
    return rows;
  }

  /**
   * The uncontended rows over the slow link at {@code roundTrip}; beyond 0 ms, a miss where ours
   * waited for as many round trips per cycle as Curator's is put down to them.
   */
  static List<Row> slowLink(SuiteResults results, Duration roundTrip) {
    List<Row> rows = new ArrayList<>();
    for (SuiteResults.Row row : results.slowLinkRows()) {
      SuiteResults.Score curator = results.slowLink(row, roundTrip, Library.CURATOR);
      SuiteResults.Score ours = results.slowLink(row, roundTrip, Library.LOCKSTEP);
      if (curator == null || ours == null) {
        continue;
      }
      String name = "slow link " + SlowLinkRuns.label(roundTrip) + ", " + row.label();
      Row judged = uncontended(name, curator, ours, results.costs.get(row));
      double oursTrips = roundTripsPerCycle(results, row, Library.LOCKSTEP, roundTrip);
      double curatorTrips = roundTripsPerCycle(results, row, Library.CURATOR, roundTrip);
      if (!judged.met() && oursTrips >= curatorTrips) {
        judged = new Row(name, judged.ratio(), Reason.ROUND_TRIPS, judged.evidence());
      }
      rows.add(judged);
    }
    return rows;
  }

  /**
   * The round trips one cycle of {@code row} waited for, estimated from the slow link: the time a
   * cycle gained from the shortest round trip measured to {@code roundTrip}, divided by what the
   * round trip of a small read gained. NaN if the run cannot tell.
   */
  static double roundTripsPerCycle(
      SuiteResults results, SuiteResults.Row row, Library library, Duration roundTrip) {
    List<Duration> trips = results.roundTrips();
    if (trips.isEmpty() || trips.get(0).equals(roundTrip)) {
      return Double.NaN;
    }
    Duration base = trips.get(0);
    SuiteResults.Score fast = results.slowLink(row, base, library);
    SuiteResults.Score slow = results.slowLink(row, roundTrip, library);
    Double fastTrip = results.linkRoundTripMillis.get(base);
    Double slowTrip = results.linkRoundTripMillis.get(roundTrip);
    if (fast == null || slow == null || fastTrip == null || slowTrip == null) {
      return Double.NaN;
    }
    double gainedPerCycle = 1e3 / slow.perSecond() - 1e3 / fast.perSecond();
    return gainedPerCycle / (slowTrip - fastTrip);
  }

  /** The handoff rows up to {@code maxWaiters}. */
  static List<Row> handoff(SuiteResults results, int maxWaiters) {
    List<Row> rows = new ArrayList<>();
    for (int n : results.queueLengths()) {
      HandoffScenario.Result curator = results.handoff(Library.CURATOR, n);
      HandoffScenario.Result ours = results.handoff(Library.LOCKSTEP, n);
      if (n <= maxWaiters && curator != null && ours != null) {
        rows.add(handoffRow(n, curator, ours));
      }
    }
    return rows;
  }

  private static Row uncontended(
      String name,
      SuiteResults.Score curatorScore,
      SuiteResults.Score oursScore,
      Map<Library, CycleCost> costs) {
    double ratio = oursScore.perSecond() / curatorScore.perSecond();
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
    Evidence evidence = Evidence.of(ours, curator, oursScore, curatorScore);
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
        ours.requestsPerHandoff() > curator.requestsPerHandoff() * GoalVerdicts.TRAFFIC_MARGIN
            || ours.responseBytesPerHandoff()
                > curator.responseBytesPerHandoff() * GoalVerdicts.TRAFFIC_MARGIN;
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
        ours.requestsPerAcquisition()
            > curator.requestsPerAcquisition() * GoalVerdicts.TRAFFIC_MARGIN;
    Evidence evidence =
        Evidence.requests(ours.requestsPerAcquisition(), curator.requestsPerAcquisition());
    return new Row(
        name,
        ours.perSecond() / curator.perSecond(),
        more ? Reason.MORE_TRAFFIC : Reason.SINGLE_LOAD_POINT,
        evidence);
  }
}
