package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A budget counts from the call, on the clock it is given, and sets a timer only if bounded. */
@Timeout(10)
class BudgetTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final List<Long> timers = new ArrayList<>();
  private final Scheduler scheduler =
      new Scheduler() {
        @Override
        public void schedule(long delayMillis, Runnable task) {
          timers.add(delayMillis);
        }

        @Override
        public void execute(Runnable task) {
          task.run();
        }
      };

  @Test
  void aBoundedBudget_countsDownFromTheCall_andStopsAtZero() {
    Budget budget = Budget.of(TimeUnit.MILLISECONDS.toNanos(100), clock::get);

    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(30));
    assertThat(budget.bounded()).isTrue();
    assertThat(budget.remainingNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(70));

    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
    assertThat(budget.remainingNanos()).isZero();
  }

  @Test
  void theDeadlineTimer_isSetForWhatIsLeft() {
    Budget budget = Budget.of(TimeUnit.MILLISECONDS.toNanos(100), clock::get);
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(40));

    budget.atDeadline(scheduler, () -> {});

    assertThat(timers).containsExactly(60L);
  }

  @Test
  void noBudget_andForever_neverRunOut_andSetNoTimer() {
    Budget none = Budget.of(-1, clock::get);
    Budget forever = Budget.of(Long.MAX_VALUE, clock::get);
    clock.addAndGet(TimeUnit.DAYS.toNanos(1));

    none.atDeadline(scheduler, () -> {});
    forever.atDeadline(scheduler, () -> {});

    assertThat(timers).isEmpty();
    assertThat(none.bounded()).isFalse();
    assertThat(none.remainingNanos()).isNegative();
    assertThat(forever.bounded()).isFalse();
    assertThat(forever.remainingNanos()).isPositive();
  }

  @Test
  void aZeroBudget_isSpentAtOnce_andItsTimerFiresAtOnce() {
    Budget budget = Budget.of(0, clock::get);

    budget.atDeadline(scheduler, () -> {});

    assertThat(budget.remainingNanos()).isZero();
    assertThat(timers).containsExactly(0L);
  }

  @Test
  void overdue_countsFromTheDeadline_whenTheWorkGotUnderWayBeforeIt() {
    Budget budget = Budget.of(TimeUnit.MILLISECONDS.toNanos(100), clock::get);
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
    budget.underWay();
    assertThat(budget.overdueNanos()).isZero();

    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(340)); // woke 250 ms after the deadline
    assertThat(budget.overdueNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
  }

  @Test
  void overdue_countsFromTheStartOfTheWork_whenStartingItTookTheWholeBudget() {
    Budget budget = Budget.of(0, clock::get);
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(300)); // a cold first call
    assertThat(budget.overdueNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(300));

    budget.underWay();
    assertThat(budget.overdueNanos()).as("due now, not at the deadline").isZero();
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(50));
    assertThat(budget.overdueNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
    assertThat(budget.remainingNanos()).as("the budget itself is still spent").isZero();
  }

  @Test
  void underWay_countsOnlyOnce_soWorkStartedLaterOnTheBudgetSharesItsGrace() {
    Budget budget = Budget.of(0, clock::get); // a composed lock's, given to each lock in turn
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(30));
    budget.underWay(); // the first lock's work: due now
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(150)); // its answer

    budget.underWay(); // the second lock's work
    assertThat(budget.overdueNanos())
        .as("still due from the first lock's start, not from the second's")
        .isEqualTo(TimeUnit.MILLISECONDS.toNanos(150));
  }

  @Test
  void underWay_onTime_thenLateWork_countsFromTheDeadline() {
    Budget budget = Budget.of(TimeUnit.MILLISECONDS.toNanos(100), clock::get);
    budget.underWay(); // the first lock's work, well within the budget
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(160));

    budget.underWay(); // the next lock's work starts 60 ms after the deadline
    assertThat(budget.overdueNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(60));
  }

  @Test
  void underWay_onABudgetThatCannotRunOut_changesNothing() {
    Budget forever = Budget.of(Long.MAX_VALUE, clock::get);
    clock.addAndGet(TimeUnit.DAYS.toNanos(1));
    forever.underWay();
    assertThat(forever.overdueNanos()).isZero();
    assertThat(forever.remainingNanos()).isPositive();
  }
}
