package io.lockstep.bench;

import io.lockstep.bench.GoalVerdicts.LinkSpeedUp;
import io.lockstep.bench.GoalVerdicts.Reason;
import io.lockstep.bench.GoalVerdicts.RecordingRow;
import io.lockstep.bench.GoalVerdicts.Row;
import io.lockstep.bench.GoalVerdicts.SpeedUp;
import io.lockstep.bench.GoalVerdicts.WaitersGrowth;
import io.lockstep.bench.GoalVerdicts.WatchGoal;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The goals of the paths services take, judged from one run: the slow link, handoff speed, many
 * waiters on one client, watch events per acquisition and the cost of the Flight Recorder. Pure,
 * like {@link GoalVerdicts}, which gathers them.
 */
final class ServiceGoals {
  private static final SuiteResults.Row MUTEX = new SuiteResults.Row(Recipe.MUTEX, 1);

  /** A drain counts as rereading the queue when its bytes per waiter grew at least this much. */
  private static final double REREAD_BYTES_GROWTH = 2.0;

  private ServiceGoals() {}

  /** The uncontended rows straight to the server and through the proxy at 0 ms. */
  static List<Row> zeroDelay(SuiteResults results) {
    List<Row> rows = new ArrayList<>(ThroughputRows.uncontended(results));
    rows.addAll(ThroughputRows.slowLink(results, Duration.ZERO));
    return rows;
  }

  /**
   * Local handoff against Curator, {@link CohortScenario#THREADS} threads on one client: at least
   * the speed-up {@link GoalVerdicts#COHORT_GOALS} sets for each round trip measured.
   */
  static List<SpeedUp> cohort(SuiteResults results) {
    List<SpeedUp> goals = new ArrayList<>();
    for (Duration trip : results.cohortRoundTrips()) {
      Double target = GoalVerdicts.COHORT_GOALS.get(trip);
      LoadResult curator = results.cohortRate(trip, Contender.CURATOR);
      LoadResult ours = results.cohortRate(trip, Contender.LOCKSTEP_LOCAL_HANDOFF);
      if (target == null || curator == null || ours == null) {
        continue;
      }
      double requests = ours.requestsPerAcquisition();
      double curatorRequests = curator.requestsPerAcquisition();
      GoalVerdicts.Evidence evidence = GoalVerdicts.Evidence.requests(requests, curatorRequests);
      goals.add(
          new SpeedUp(
              "mutex, "
                  + CohortScenario.THREADS
                  + " threads on one client, at "
                  + SlowLinkRuns.label(trip)
                  + " added round trip (Lockstep with local handoff)",
              target,
              ours.perSecond() / curator.perSecond(),
              requests > curatorRequests * GoalVerdicts.TRAFFIC_MARGIN
                  ? Reason.MORE_TRAFFIC
                  : Reason.SINGLE_LOAD_POINT,
              evidence));
    }
    return goals;
  }

  /** The handoff rows up to {@link GoalVerdicts#HANDOFF_SPEED_MAX_WAITERS}. */
  static List<Row> handoffSpeed(SuiteResults results) {
    return ThroughputRows.handoff(results, GoalVerdicts.HANDOFF_SPEED_MAX_WAITERS);
  }

  /**
   * The mutex at the longest round trip measured over the slow link, if longer than 0 ms; a miss is
   * put down to round trips when ours waited for as many per cycle as Curator's, else to the
   * writes, which both libraries make and whose fsync no round trip saved can shorten.
   */
  static LinkSpeedUp slowLink(SuiteResults results) {
    List<Duration> trips = results.roundTrips();
    if (trips.isEmpty()) {
      return null;
    }
    Duration longest = trips.get(trips.size() - 1);
    SuiteResults.Score curator = results.slowLink(MUTEX, longest, Library.CURATOR);
    SuiteResults.Score ours = results.slowLink(MUTEX, longest, Library.LOCKSTEP);
    if (longest.isZero() || curator == null || ours == null) {
      return null;
    }
    double oursTrips = ThroughputRows.roundTripsPerCycle(results, MUTEX, Library.LOCKSTEP, longest);
    double curatorTrips =
        ThroughputRows.roundTripsPerCycle(results, MUTEX, Library.CURATOR, longest);
    Reason reason = oursTrips >= curatorTrips ? Reason.ROUND_TRIPS : Reason.WRITES_BOUND;
    return new LinkSpeedUp(
        longest, ours.perSecond() / curator.perSecond(), oursTrips, curatorTrips, reason);
  }

  /**
   * Ours draining the largest N measured against the smallest; a miss is a queue reread when the
   * response bytes per waiter grew with N, else time off the wire.
   */
  static WaitersGrowth waiters(SuiteResults results) {
    List<WaitersScenario.Result> ours =
        results.waiterCounts().stream()
            .map(n -> results.waiters(Library.LOCKSTEP, n))
            .filter(r -> r != null && r.finished())
            .toList();
    if (ours.size() < 2) {
      return null;
    }
    WaitersScenario.Result shortest = ours.get(0);
    WaitersScenario.Result longest = ours.get(ours.size() - 1);
    Reason reason =
        longest.responseBytesPerWaiter() >= REREAD_BYTES_GROWTH * shortest.responseBytesPerWaiter()
            ? Reason.QUEUE_REREAD
            : Reason.HANDOFF_CPU;
    return new WaitersGrowth(shortest, longest, reason);
  }

  /**
   * Ours against Curator's {@link GoalVerdicts#WATCH_GOAL_MODE}; a miss is put down to child
   * watches if any fired, else to the holder's watch on its own node.
   */
  static WatchGoal watches(SuiteResults results) {
    WatchScenario.Result curator = results.watches(GoalVerdicts.WATCH_GOAL_MODE, Contender.CURATOR);
    WatchScenario.Result ours = results.watches(GoalVerdicts.WATCH_GOAL_MODE, Contender.LOCKSTEP);
    if (curator == null || ours == null) {
      return null;
    }
    // child events explain the miss only if they make up at least half of what ours fires more
    double excess = ours.watchesPerAcquisition() - curator.watchesPerAcquisition();
    Reason reason =
        ours.childPerAcquisition() >= excess / 2 ? Reason.CHILD_WATCHES : Reason.HOLDER_WATCH;
    return new WatchGoal(curator, ours, reason);
  }

  /**
   * Each row's Lockstep cycles per second with a recording against without; a slower row is put
   * down to the recording itself when Curator's lock, the control, slowed down as much (within 5%).
   */
  static List<RecordingRow> recording(SuiteResults results) {
    List<RecordingRow> rows = new ArrayList<>();
    for (SuiteResults.Row row : results.recordingRows()) {
      SuiteResults.RecordingPoint off = results.recording(row, Library.LOCKSTEP, false);
      SuiteResults.RecordingPoint on = results.recording(row, Library.LOCKSTEP, true);
      if (off == null || on == null) {
        continue;
      }
      double ratio = on.score().perSecond() / off.score().perSecond();
      SuiteResults.RecordingPoint curatorOff = results.recording(row, Library.CURATOR, false);
      SuiteResults.RecordingPoint curatorOn = results.recording(row, Library.CURATOR, true);
      double curatorRatio =
          curatorOff == null || curatorOn == null
              ? Double.NaN
              : curatorOn.score().perSecond() / curatorOff.score().perSecond();
      Reason reason = ratio >= curatorRatio - 0.05 ? Reason.RECORDING_OVERHEAD : Reason.CLIENT_TIME;
      rows.add(
          new RecordingRow(
              row.label(),
              ratio,
              curatorRatio,
              ThroughputRows.overlap(on.score(), off.score()),
              reason));
    }
    return rows;
  }
}
