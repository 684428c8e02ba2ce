package io.lockstep.bench;

import static io.lockstep.bench.SuiteFixtures.cost;
import static io.lockstep.bench.SuiteFixtures.drain;
import static io.lockstep.bench.SuiteFixtures.load;
import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.bench.GoalVerdicts.Reason;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The page's goals judged on made-up figures: met, missed, and the reason each miss points to. */
@Timeout(10)
class GoalVerdictsTest {
  private static final SuiteResults.Row MUTEX = new SuiteResults.Row(Recipe.MUTEX, 1);

  @Test
  void aRunThatBeatsCuratorEverywhere_meetsEveryGoal() {
    GoalVerdicts.Verdicts verdicts = GoalVerdicts.judge(SuiteFixtures.everyGoalMet());

    assertThat(verdicts.requests().met()).isTrue();
    assertThat(verdicts.requests().rows()).isEqualTo(SuiteResults.UNCONTENDED_ROWS.size());
    assertThat(verdicts.allocation())
        .hasSize(SuiteSettings.SINGLE_PATH_ROWS.size())
        .allMatch(GoalVerdicts.AllocationRow::met);
    assertThat(verdicts.throughput()).isNotEmpty().allMatch(GoalVerdicts.Row::met);
    assertThat(verdicts.semaphore().met()).isTrue();
    assertThat(verdicts.multi().met()).isTrue();
    assertThat(verdicts.handoff().met()).isTrue();
  }

  @Test
  void goalsOfSectionsNotRun_areNotJudged() {
    GoalVerdicts.Verdicts verdicts = GoalVerdicts.judge(new SuiteResults());

    assertThat(verdicts.requests()).isNull();
    assertThat(verdicts.allocation()).isEmpty();
    assertThat(verdicts.throughput()).isEmpty();
    assertThat(verdicts.semaphore()).isNull();
    assertThat(verdicts.handoff()).isNull();
  }

  @Test
  void moreThanThreeRequestsPerCycle_missesTheRequestGoal() {
    SuiteResults results = new SuiteResults();
    results.cost(MUTEX, Library.LOCKSTEP, cost(4, 2, 250));

    GoalVerdicts.RequestCount requests = GoalVerdicts.judge(results).requests();

    assertThat(requests.met()).isFalse();
    assertThat(requests.over()).containsEntry("mutex", 4.0);
  }

  @Test
  void moreBytesPerCycleThanCurators_missesTheAllocationGoal_onSinglePathRowsWithBothFigures() {
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(1_000, 10, 5_000));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(1_100, 10, 6_000));
    SuiteResults.Row read = new SuiteResults.Row(Recipe.READ, 1);
    results.score(read, Library.CURATOR, new SuiteResults.Score(1_000, 10));
    results.score(read, Library.LOCKSTEP, new SuiteResults.Score(1_100, 10));
    SuiteResults.Row multi = new SuiteResults.Row(Recipe.MULTI, 4);
    results.score(multi, Library.CURATOR, new SuiteResults.Score(100, 10, 20_000));
    results.score(multi, Library.LOCKSTEP, new SuiteResults.Score(400, 10, 30_000));

    List<GoalVerdicts.AllocationRow> rows = GoalVerdicts.judge(results).allocation();

    assertThat(rows).containsExactly(new GoalVerdicts.AllocationRow("mutex", 6_000, 5_000));
    assertThat(rows.get(0).met()).isFalse();
    assertThat(new GoalVerdicts.AllocationRow("mutex", 5_000, 5_000).met()).isTrue();
  }

  @Test
  void aSlowerUncontendedRow_isExplainedByTrafficFirst_thenByJmhsError() {
    assertThat(uncontended(cost(4, 3, 250), 900, 50, 1_000, 50).reason())
        .isEqualTo(Reason.MORE_TRAFFIC);
    assertThat(uncontended(cost(3, 2, 250), 900, 80, 1_000, 80).reason())
        .isEqualTo(Reason.WITHIN_ERROR);
    assertThat(uncontended(cost(3, 2, 250), 900, 10, 1_000, 10).reason())
        .isEqualTo(Reason.CLIENT_TIME);
    assertThat(uncontended(cost(3, 2, 250), 900, Double.NaN, 1_000, 10).reason())
        .isEqualTo(Reason.CLIENT_TIME);
  }

  private static GoalVerdicts.Row uncontended(
      CycleCost ours, double oursRate, double oursError, double curatorRate, double curatorError) {
    SuiteResults results = new SuiteResults();
    results.cost(MUTEX, Library.CURATOR, cost(3, 2, 320));
    results.cost(MUTEX, Library.LOCKSTEP, ours);
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(curatorRate, curatorError));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(oursRate, oursError));
    GoalVerdicts.Row row = GoalVerdicts.judge(results).throughput().get(0);
    assertThat(row.met()).isFalse();
    assertThat(row.ratio()).isEqualTo(oursRate / curatorRate);
    return row;
  }

  @Test
  void anUncountedRow_saysSo() {
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(1_000, 10));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(900, 10));

    assertThat(GoalVerdicts.judge(results).throughput())
        .singleElement()
        .extracting(GoalVerdicts.Row::reason)
        .isEqualTo(Reason.NOT_COUNTED);
  }

  @Test
  void aSpeedUpBelowItsTarget_isBoundByWrites() {
    SuiteResults results = new SuiteResults();
    SuiteResults.Row row = new SuiteResults.Row(Recipe.MULTI, GoalVerdicts.MULTI_GOAL_PATHS);
    results.cost(row, Library.CURATOR, cost(24, 16, 2_600));
    results.cost(row, Library.LOCKSTEP, cost(3, 2, 2_000));
    results.score(row, Library.CURATOR, new SuiteResults.Score(100, 5));
    results.score(row, Library.LOCKSTEP, new SuiteResults.Score(400, 5));

    GoalVerdicts.SpeedUp multi = GoalVerdicts.judge(results).multi();

    assertThat(multi.met()).isFalse();
    assertThat(multi.speedUp()).isEqualTo(4.0);
    assertThat(multi.reason()).isEqualTo(Reason.WRITES_BOUND);
    assertThat(multi.evidence().curatorWrites()).isEqualTo(16.0);
  }

  @Test
  void handoffTimeThatGrows_isAQueueRereadWhenBytesGrow_elseTimeOffTheWire() {
    GoalVerdicts.HandoffGrowth reread = handoff(1_000, 2_000, 3_000, 60_000);
    assertThat(reread.met()).isFalse();
    assertThat(reread.growth()).isEqualTo(2.0);
    assertThat(reread.reason()).isEqualTo(Reason.QUEUE_REREAD);

    GoalVerdicts.HandoffGrowth cpu = handoff(1_000, 2_000, 3_000, 3_000);
    assertThat(cpu.met()).isFalse();
    assertThat(cpu.reason()).isEqualTo(Reason.HANDOFF_CPU);

    assertThat(handoff(1_000, 1_200, 3_000, 60_000).met()).isTrue();
  }

  private static GoalVerdicts.HandoffGrowth handoff(
      double shortMicros, double longMicros, long shortBytes, long longBytes) {
    SuiteResults results = new SuiteResults();
    results.handoffs.add(drain(Library.LOCKSTEP, 100, shortMicros, shortBytes));
    results.handoffs.add(drain(Library.LOCKSTEP, 2000, longMicros, longBytes));
    return GoalVerdicts.judge(results).handoff();
  }

  @Test
  void aSlowerLoadPoint_isMoreTrafficOnlyBeyondTheMargin() {
    SuiteResults results = new SuiteResults();
    results.multi.addAll(
        List.of(load(Library.CURATOR, 8, 1_000, 3.0), load(Library.LOCKSTEP, 8, 900, 3.1)));
    results.mixes.put(
        0.5, List.of(load(Library.CURATOR, 8, 1_000, 3.0), load(Library.LOCKSTEP, 8, 900, 3.5)));

    List<GoalVerdicts.Row> rows = GoalVerdicts.judge(results).throughput();

    assertThat(rows)
        .extracting(GoalVerdicts.Row::name, GoalVerdicts.Row::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("read-write mix 50 / 50", Reason.MORE_TRAFFIC),
            org.assertj.core.groups.Tuple.tuple("multi-lock contention", Reason.SINGLE_LOAD_POINT));
  }

  @Test
  void everyReason_linksToAHeadingOfItsLabel() {
    for (Reason reason : Reason.values()) {
      assertThat(reason.anchor())
          .isEqualTo(reason.label().toLowerCase(Locale.ROOT).replace(' ', '-'))
          .matches("[a-z-]+");
    }
  }
}
