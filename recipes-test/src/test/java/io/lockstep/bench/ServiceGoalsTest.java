package io.lockstep.bench;

import static io.lockstep.bench.SuiteFixtures.drain;
import static io.lockstep.bench.SuiteFixtures.waiters;
import static io.lockstep.bench.SuiteFixtures.watches;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.bench.GoalVerdicts.Reason;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The goals of the slow link, handoff speed, many waiters, watch events and the Flight Recorder,
 * judged on made-up figures.
 */
@Timeout(10)
class ServiceGoalsTest {
  private static final SuiteResults.Row MUTEX = new SuiteResults.Row(Recipe.MUTEX, 1);

  @Test
  void aRunThatBeatsCuratorEverywhere_meetsEveryServiceGoal() {
    GoalVerdicts.Verdicts verdicts = GoalVerdicts.judge(SuiteFixtures.everyGoalMet());

    assertThat(verdicts.zeroDelay()).isNotEmpty().allMatch(GoalVerdicts.Row::met);
    assertThat(verdicts.slowLink().met()).isTrue();
    assertThat(verdicts.handoffSpeed()).isNotEmpty().allMatch(GoalVerdicts.Row::met);
    assertThat(verdicts.waiters().met()).isTrue();
    assertThat(verdicts.watches().met()).isTrue();
    assertThat(verdicts.recording()).isNotEmpty().allMatch(GoalVerdicts.RecordingRow::met);
  }

  @Test
  void goalsOfSectionsNotRun_areNotJudged() {
    GoalVerdicts.Verdicts verdicts = GoalVerdicts.judge(new SuiteResults());

    assertThat(verdicts.zeroDelay()).isEmpty();
    assertThat(verdicts.slowLink()).isNull();
    assertThat(verdicts.handoffSpeed()).isEmpty();
    assertThat(verdicts.waiters()).isNull();
    assertThat(verdicts.watches()).isNull();
    assertThat(verdicts.recording()).isEmpty();
  }

  @Test
  void roundTripsPerCycle_areTheTimeACycleGained_overWhatARoundTripGained() {
    SuiteResults results = new SuiteResults();
    // Curator: 4 ms a cycle at 1 ms, 1.25 ms at 0 ms; a round trip gained 1 ms (0.3 -> 1.3 ms).
    SuiteFixtures.slowLink(results, 800, 900, 250, 350);

    assertThat(
            ThroughputRows.roundTripsPerCycle(
                results, MUTEX, Library.CURATOR, Duration.ofMillis(1)))
        .isCloseTo(2.75, within(1e-9));
    assertThat(ThroughputRows.roundTripsPerCycle(results, MUTEX, Library.LOCKSTEP, Duration.ZERO))
        .isNaN();
    GoalVerdicts.LinkSpeedUp link = GoalVerdicts.judge(results).slowLink();
    assertThat(link.roundTrip()).isEqualTo(Duration.ofMillis(1));
    assertThat(link.speedUp()).isCloseTo(1.4, within(1e-9));
    assertThat(link.met()).isTrue();
  }

  @Test
  void aSlowLinkSpeedUpBelowTarget_isRoundTripsWhenOursWaitedAsOften_elseTheWrites() {
    SuiteResults fewerTrips = new SuiteResults();
    SuiteFixtures.slowLink(fewerTrips, 800, 800, 250, 300); // ours 2.08 round trips, Curator 2.75
    GoalVerdicts.LinkSpeedUp writes = GoalVerdicts.judge(fewerTrips).slowLink();
    assertThat(writes.met()).isFalse();
    assertThat(writes.reason()).isEqualTo(Reason.WRITES_BOUND);

    SuiteResults sameTrips = new SuiteResults();
    SuiteFixtures.slowLink(sameTrips, 800, 800, 250, 250);
    GoalVerdicts.LinkSpeedUp trips = GoalVerdicts.judge(sameTrips).slowLink();
    assertThat(trips.met()).isFalse();
    assertThat(trips.reason()).isEqualTo(Reason.ROUND_TRIPS);
    assertThat(GoalVerdicts.judge(sameTrips).throughput())
        .filteredOn(row -> row.name().equals("slow link 1 ms, mutex"))
        .singleElement()
        .satisfies(row -> assertThat(row.met()).isTrue()); // level is not slower
  }

  @Test
  void theZeroDelayGoal_takesTheRowsStraightAndThroughTheProxyAtZero() {
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(1_000, 10));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(1_100, 10));
    SuiteFixtures.slowLink(results, 800, 700, 250, 350);

    List<GoalVerdicts.Row> rows = GoalVerdicts.judge(results).zeroDelay();

    assertThat(rows)
        .extracting(GoalVerdicts.Row::name, GoalVerdicts.Row::met)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("uncontended mutex", true),
            org.assertj.core.groups.Tuple.tuple("slow link 0 ms, mutex", false));
    assertThat(rows.get(1).reason()).isEqualTo(Reason.NOT_COUNTED);
  }

  @Test
  void theHandoffSpeedGoal_takesQueuesUpToFiveHundred() {
    SuiteResults results = new SuiteResults();
    for (int n : List.of(100, 500, 2000)) {
      results.handoffs.add(drain(Library.CURATOR, n, 1_000, 3_000));
      results.handoffs.add(drain(Library.LOCKSTEP, n, n == 2000 ? 1_200 : 900, 3_000));
    }

    List<GoalVerdicts.Row> rows = GoalVerdicts.judge(results).handoffSpeed();

    assertThat(rows)
        .extracting(GoalVerdicts.Row::name)
        .containsExactly("handoff N = 100", "handoff N = 500");
    assertThat(rows).allMatch(GoalVerdicts.Row::met);
  }

  @Test
  void drainingTenTimesTheWaiters_mayTakeTwelveTimesAsLong_andAMissIsExplainedByTheBytes() {
    assertThat(waitersGrowth(1_000, 11_900, 300, 300).met()).isTrue();
    GoalVerdicts.WaitersGrowth cpu = waitersGrowth(1_000, 13_000, 300, 300);
    assertThat(cpu.met()).isFalse();
    assertThat(cpu.allowed()).isCloseTo(12.0, within(1e-9));
    assertThat(cpu.growth()).isCloseTo(13.0, within(1e-9));
    assertThat(cpu.reason()).isEqualTo(Reason.HANDOFF_CPU);
    assertThat(waitersGrowth(1_000, 13_000, 300, 3_000).reason()).isEqualTo(Reason.QUEUE_REREAD);
  }

  private static GoalVerdicts.WaitersGrowth waitersGrowth(
      double shortMillis, double longMillis, long shortBytes, long longBytes) {
    SuiteResults results = new SuiteResults();
    results.waiters.add(waiters(Library.LOCKSTEP, 1_000, shortMillis, shortBytes));
    results.waiters.add(waiters(Library.LOCKSTEP, 10_000, longMillis, longBytes));
    return GoalVerdicts.judge(results).waiters();
  }

  @Test
  void aStoppedWaitersRun_isNotJudged() {
    SuiteResults results = new SuiteResults();
    results.waiters.add(waiters(Library.LOCKSTEP, 1_000, 1_000, 300));
    results.waiters.add(new WaitersScenario.Result(Library.LOCKSTEP, 10_000, false, Map.of()));

    assertThat(GoalVerdicts.judge(results).waiters()).isNull();
  }

  @Test
  void moreWatchEventsThanCurator_areChildWatchesIfTheyMakeUpHalfTheExcess_elseTheHolderWatch() {
    assertThat(watchGoal(0.9, 0.0).met()).isTrue();
    GoalVerdicts.WatchGoal holder = watchGoal(1.6, 0.0);
    assertThat(holder.met()).isFalse();
    assertThat(holder.reason()).isEqualTo(Reason.HOLDER_WATCH);
    assertThat(watchGoal(1.0, 0.5).reason()).isEqualTo(Reason.CHILD_WATCHES);
    assertThat(watchGoal(1.8, 0.002).reason())
        .as("a few child events do not explain 0.8 more per acquisition")
        .isEqualTo(Reason.HOLDER_WATCH);
  }

  private static GoalVerdicts.WatchGoal watchGoal(double deleted, double children) {
    SuiteResults results = new SuiteResults();
    results.watches.add(watches(Contender.CURATOR, ClientMode.OWN, 1.0, 0, 0));
    results.watches.add(watches(Contender.LOCKSTEP, ClientMode.OWN, deleted, children, 0));
    results.watches.add(watches(Contender.LOCKSTEP, ClientMode.SHARED, 0.1, 0, 0));
    GoalVerdicts.WatchGoal goal = GoalVerdicts.judge(results).watches();
    assertThat(goal.ours().mode()).isEqualTo(ClientMode.OWN);
    return goal;
  }

  @Test
  void aRecordingThatSlowsLockstepBeyondError_isTheRecordersOwnCostIfCuratorSlowedAsMuch() {
    assertThat(recordingRow(1_000, 990, 1_000, 1_000).met()).as("within error").isTrue();
    assertThat(recordingRow(1_000, 1_050, 1_000, 1_000).met()).as("faster").isTrue();
    GoalVerdicts.RecordingRow overhead = recordingRow(1_000, 900, 1_000, 920);
    assertThat(overhead.met()).isFalse();
    assertThat(overhead.reason()).isEqualTo(Reason.RECORDING_OVERHEAD);
    assertThat(recordingRow(1_000, 900, 1_000, 1_000).reason()).isEqualTo(Reason.CLIENT_TIME);
  }

  private static GoalVerdicts.RecordingRow recordingRow(
      double oursOff, double oursOn, double curatorOff, double curatorOn) {
    SuiteResults results = new SuiteResults();
    SuiteFixtures.recording(results, oursOff, oursOn, curatorOff, curatorOn);
    return GoalVerdicts.judge(results).recording().get(0);
  }
}
