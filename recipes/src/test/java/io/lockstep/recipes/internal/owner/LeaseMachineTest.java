package io.lockstep.recipes.internal.owner;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The lease request's table, without a server: every situation of a request for two leases meets
 * every event, and the steps and the stage that follow are checked against {@link #TABLE} (the
 * table of docs/design.md). Then what a cell cannot show: whole runs, a zero budget, and the
 * endings that race a withdrawal.
 */
@Timeout(10)
class LeaseMachineTest {
  private static final long BUDGET = TimeUnit.SECONDS.toNanos(5);

  /**
   * A request for two leases, in one of the rows' situations (attempts are numbered as started).
   *
   * <ul>
   *   <li>FAST: fast try 1 was granted; fast try 2 is in flight.
   *   <li>FAST_WITHDRAWING: fast try 2 said "wait"; its withdrawal is out.
   *   <li>MUTEX: try 2 was withdrawn and lease 1 given back; mutex 3 is in flight.
   *   <li>LEASE: mutex 3 is held; lease 4 was granted; lease 5 waits.
   *   <li>LEASE_WITHDRAWING: as LEASE, and the mutex was lost: lease 5's withdrawal is out.
   *   <li>EXPIRING: as LEASE, and the budget ran out: lease 5 is being ended.
   *   <li>ENDED: leases 4 and 5 were granted; the request succeeded.
   * </ul>
   */
  enum Row {
    FAST,
    FAST_WITHDRAWING,
    MUTEX,
    LEASE,
    LEASE_WITHDRAWING,
    EXPIRING,
    ENDED
  }

  /**
   * The columns: events about the row's subject (the attempt being withdrawn or ended, else the one
   * in flight), the mutex (MUTEX_LOST), the caller (DEADLINE, CANCEL), or fast try 1 (STALE).
   */
  enum Column {
    FAST_DECIDED,
    GRANTED,
    GRANTED_LOST,
    GRANTED_FAILED,
    WITHDRAWN_GRANTED,
    WITHDRAWN,
    WITHDRAWN_FAILED,
    MUTEX_LOST,
    DEADLINE,
    CANCEL,
    EXPIRED_GRANTED,
    EXPIRED_TIMED_OUT,
    EXPIRED_UNREACHABLE,
    STALE
  }

  /**
   * Row x column -> the steps' types joined by "+" and the stage after them; "-" for no step (stage
   * unchanged).
   */
  private static final String TABLE =
      """
      row                FAST_DECIDED     GRANTED                GRANTED_LOST             GRANTED_FAILED  WITHDRAWN_GRANTED  WITHDRAWN                        WITHDRAWN_FAILED  MUTEX_LOST                 DEADLINE        CANCEL            EXPIRED_GRANTED  EXPIRED_TIMED_OUT  EXPIRED_UNREACHABLE  STALE
      FAST               Withdraw/FAST    -                      -                        -               -                  -                                -                 -                          Expire/ENDED    Withdraw/ENDED    -                -                  -                    -
      FAST_WITHDRAWING   -                -                      -                        -               Succeed/ENDED      Carry+Release+StartMutex/MUTEX   Finish/ENDED      -                          -/ENDED         -/ENDED           -                -                  -                    -
      MUTEX              -                StartLease/LEASE       Release+StartMutex/MUTEX Finish/ENDED    -                  -                                -                 Release+StartMutex/MUTEX   Expire/ENDED    Withdraw/ENDED    -                -                  -                    -
      LEASE              -                Succeed/ENDED          Succeed/ENDED            Finish/ENDED    -                  -                                -                 Release+Withdraw/MUTEX     Expire/ENDED    Withdraw/ENDED    -                -                  -                    -
      LEASE_WITHDRAWING  -                -                      -                        -               Succeed/ENDED      Carry+Release+StartMutex/MUTEX   Finish/ENDED      -                          -/ENDED         -/ENDED           -                -                  -                    -
      EXPIRING           -                -                      -                        -               -                  -                                -                 -                          -               CancelRefused/ENDED Succeed/ENDED  Finish/ENDED       Finish/ENDED         -
      ENDED              -                -                      -                        -               -                  -                                -                 -                          -               CancelRefused/ENDED -              -                  -                    -
      """;

  static Stream<Arguments> cells() {
    return StateTables.cells(TABLE, Row.class, Column.class);
  }

  @Test
  void theTable_coversEveryRowAndColumn() {
    StateTables.assertComplete(TABLE, Row.class, Column.class);
  }

  @ParameterizedTest(name = "{0} x {1} -> {2}")
  @MethodSource("cells")
  void cell(Row row, Column column, String expected) {
    Fixture fixture = new Fixture(row);
    LeaseMachine.Stage before = fixture.machine.stage();
    List<LeaseStep> steps = fixture.fire(column);
    String actual =
        steps.isEmpty() && fixture.machine.stage() != before
            ? "-/" + fixture.machine.stage()
            : StateTables.outcome(steps, fixture.machine.stage());
    assertThat(actual).isEqualTo(expected);
  }

  // ---- whole runs ----

  @Test
  void oneLease_queuesBehindTheMutex_andCarriesTheFastTrysAcquisitionOn() {
    Fixture run = new Fixture(1);
    assertThat(run.on(new LeaseEvent.Begin())).containsExactly(new LeaseStep.StartFast(1));
    assertThat(run.on(new LeaseEvent.FastDecided(1)))
        .containsExactly(new LeaseStep.Withdraw(1, null));
    assertThat(run.on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.WITHDRAWN)))
        .containsExactly(new LeaseStep.Carry(1), new LeaseStep.StartMutex(2));
    assertThat(run.on(new LeaseEvent.Granted(2, null, false)))
        .containsExactly(new LeaseStep.StartLease(3, true));
    assertThat(run.on(new LeaseEvent.Granted(3, null, false)))
        .containsExactly(new LeaseStep.Succeed(List.of(3), 2));
  }

  @Test
  void fastTriesThatAreGranted_succeedWithoutTheMutex() {
    Fixture run = new Fixture(2);
    run.on(new LeaseEvent.Begin());
    run.on(new LeaseEvent.FastDecided(1));
    assertThat(run.on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.GRANTED)))
        .containsExactly(new LeaseStep.StartFast(2));
    run.on(new LeaseEvent.FastDecided(2));
    assertThat(run.on(new LeaseEvent.Withdrawn(2, Attempt.Outcome.GRANTED)))
        .containsExactly(new LeaseStep.Succeed(List.of(1, 2), LeaseMachine.NONE));
  }

  @Test
  void aZeroBudget_triesOnce_andEndsBusyWithTheTryCleanedUp() {
    Fixture run = new Fixture(1, 0);
    run.on(new LeaseEvent.Begin());
    assertThat(run.on(new LeaseEvent.FastDecided(1)))
        .containsExactly(new LeaseStep.Withdraw(1, AcquireOutcome.TIMED_OUT));
    List<LeaseStep> steps = run.on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.WITHDRAWN));
    assertThat(steps).hasSize(1);
    LeaseStep.Finish finish = (LeaseStep.Finish) steps.get(0);
    assertThat(finish.inFlight()).isEqualTo(1);
    assertThat(finish.cause()).isInstanceOf(LeaseStep.Busy.class);
    assertThat(run.machine.stage()).isEqualTo(LeaseMachine.Stage.ENDED);
  }

  @Test
  void aZeroBudget_keepsAGrantThatWonItsOnlyTry() {
    Fixture run = new Fixture(1, 0);
    run.on(new LeaseEvent.Begin());
    run.on(new LeaseEvent.FastDecided(1));
    assertThat(run.on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.GRANTED)))
        .containsExactly(new LeaseStep.Succeed(List.of(1), LeaseMachine.NONE));
  }

  @Test
  void theMutexLostWhileALeaseWaits_isTakenAgain_withNoLeaseHeld() {
    Fixture run = new Fixture(Row.LEASE);
    assertThat(run.on(new LeaseEvent.MutexLost(3)))
        .containsExactly(new LeaseStep.Release(3), new LeaseStep.Withdraw(5, null));
    assertThat(run.on(new LeaseEvent.Granted(5, null, false)))
        .as("the withdrawn lease's grant is heard through its withdrawal, not here")
        .isEmpty();
    assertThat(run.on(new LeaseEvent.Withdrawn(5, Attempt.Outcome.WITHDRAWN)))
        .containsExactly(
            new LeaseStep.Carry(5), new LeaseStep.Release(4), new LeaseStep.StartMutex(6));
    assertThat(run.machine.granted()).isEmpty();
  }

  @Test
  void aMutexLostBeforeItsGrantWasHeard_isReleasedAndTakenAgain() {
    Fixture run = new Fixture(Row.MUTEX);
    assertThat(run.on(new LeaseEvent.Granted(3, null, true)))
        .containsExactly(new LeaseStep.Release(3), new LeaseStep.StartMutex(4));
    assertThat(run.on(new LeaseEvent.MutexLost(3))).as("the old mutex's loss").isEmpty();
  }

  // ---- endings racing a withdrawal: a grant that won is kept, never lost ----

  @Test
  void aDeadlineDuringAWithdrawal_succeedsIfTheWithdrawnLeaseWasTheLastOneGranted() {
    Fixture run = new Fixture(Row.FAST_WITHDRAWING);
    assertThat(run.on(new LeaseEvent.Deadline())).isEmpty();
    assertThat(run.on(new LeaseEvent.FastDecided(2))).as("nothing new starts").isEmpty();
    assertThat(run.on(new LeaseEvent.Withdrawn(2, Attempt.Outcome.GRANTED)))
        .containsExactly(new LeaseStep.Succeed(List.of(1, 2), LeaseMachine.NONE));
  }

  @Test
  void aDeadlineDuringAWithdrawal_givesBackWhatWasGranted_andWaitsForTheWithdrawnCleanup() {
    Fixture run = new Fixture(Row.FAST_WITHDRAWING);
    run.on(new LeaseEvent.Deadline());
    long deadline = run.now;
    List<LeaseStep> steps = run.on(new LeaseEvent.Withdrawn(2, Attempt.Outcome.WITHDRAWN));
    LeaseStep.Finish finish = (LeaseStep.Finish) steps.get(0);
    assertThat(finish.inFlight()).isEqualTo(2);
    assertThat(finish.leases()).containsExactly(1);
    assertThat(finish.cause()).isInstanceOf(LeaseStep.Busy.class);
    assertThat(finish.graceEnd())
        .as("the grace counts from the deadline, not from the answer")
        .isEqualTo(deadline + Waits.GRACE_NANOS);
  }

  @Test
  void aDeadlineHeardLate_leavesOnlyTheGraceThatIsLeftAfterTheDeadline() {
    long budget = TimeUnit.MILLISECONDS.toNanos(100);
    long late = TimeUnit.MILLISECONDS.toNanos(150);
    Fixture run = new Fixture(2, budget);
    long deadline = run.now + budget;
    run.on(new LeaseEvent.Begin()); // fast try 1
    run.now = deadline + late - 10; // the timer runs 150 ms late (on() adds 10 ns)
    assertThat(run.on(new LeaseEvent.Deadline()))
        .as("the grace counts from the deadline, not from the timer")
        .containsExactly(new LeaseStep.Expire(1, deadline + Waits.GRACE_NANOS));
  }

  @Test
  void aDeadlineHeardAfterTheGrace_leavesNoneOfIt() {
    long budget = TimeUnit.MILLISECONDS.toNanos(100);
    Fixture run = new Fixture(2, budget);
    long deadline = run.now + budget;
    run.on(new LeaseEvent.Begin());
    run.now = deadline + TimeUnit.SECONDS.toNanos(5);
    List<LeaseStep> steps = run.on(new LeaseEvent.Deadline());
    assertThat(steps).containsExactly(new LeaseStep.Expire(1, run.now));
    LeaseStep.Finish finish =
        (LeaseStep.Finish) run.on(new LeaseEvent.Expired(1, Waits.Ending.TIMED_OUT)).get(0);
    assertThat(finish.graceEnd()).as("the answer is due at once").isLessThan(run.now);
  }

  @Test
  void aCancelDuringAWithdrawal_givesBackTheGrantThatWonIt() {
    Fixture run = new Fixture(Row.LEASE_WITHDRAWING);
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    assertThat(run.on(new LeaseEvent.Cancel(cleaned, null))).as("accepted, ends later").isEmpty();
    List<LeaseStep> steps = run.on(new LeaseEvent.Withdrawn(5, Attempt.Outcome.GRANTED));
    LeaseStep.Finish finish = (LeaseStep.Finish) steps.get(0);
    assertThat(finish.leases()).containsExactly(4, 5);
    assertThat(finish.mutex()).as("released at its loss").isEqualTo(LeaseMachine.NONE);
    assertThat(finish.cause()).isEqualTo(new LeaseStep.Cancelled(cleaned, null));
  }

  @Test
  void aCancelOfTheMutexAttempt_givesTheMutexBack_withoutCountingItAsALease() {
    Fixture run = new Fixture(Row.MUTEX);
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    assertThat(run.on(new LeaseEvent.Cancel(cleaned, null)))
        .containsExactly(new LeaseStep.Withdraw(3, AcquireOutcome.WITHDRAWN));
    LeaseStep.Finish finish =
        (LeaseStep.Finish) run.on(new LeaseEvent.Withdrawn(3, Attempt.Outcome.GRANTED)).get(0);
    assertThat(finish.leases()).isEmpty();
    assertThat(finish.mutex()).isEqualTo(3);
    assertThat(finish.inFlight()).isEqualTo(3);
  }

  @Test
  void aDeadlineThatFindsTheMutexGranted_givesItBack_andSaysBusy() {
    Fixture run = new Fixture(Row.MUTEX);
    List<LeaseStep> steps = run.on(new LeaseEvent.Deadline());
    assertThat(steps).containsExactly(new LeaseStep.Expire(3, run.now + Waits.GRACE_NANOS));
    LeaseStep.Finish finish =
        (LeaseStep.Finish) run.on(new LeaseEvent.Expired(3, Waits.Ending.GRANTED)).get(0);
    assertThat(finish.mutex()).isEqualTo(3);
    assertThat(finish.leases()).isEmpty();
    assertThat(finish.cause()).isInstanceOf(LeaseStep.Busy.class);
  }

  @Test
  void anAttemptThatFailsAtTheDeadline_failsTheRequestWithItsFailure() {
    Fixture run = new Fixture(Row.EXPIRING);
    LeaseStep.Finish finish =
        (LeaseStep.Finish) run.on(new LeaseEvent.Expired(5, Waits.Ending.FAILED)).get(0);
    assertThat(finish.cause()).isEqualTo(new LeaseStep.Failed(5, null));
    assertThat(finish.leases()).containsExactly(4);
    assertThat(finish.mutex()).isEqualTo(3);
  }

  /** A request for two leases (or as given), its clock, and the events of the columns. */
  static final class Fixture {
    final LeaseMachine machine;
    long now = 1_000;
    int subject; // the attempt the row's events are about

    Fixture(int qty) {
      this(qty, BUDGET);
    }

    Fixture(int qty, long budget) {
      machine = new LeaseMachine(qty, Budget.of(budget, () -> now), () -> now);
    }

    Fixture(Row row) {
      this(2);
      on(new LeaseEvent.Begin());
      on(new LeaseEvent.FastDecided(1));
      on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.GRANTED)); // try 2 starts
      subject = 2;
      if (row == Row.FAST) {
        return;
      }
      on(new LeaseEvent.FastDecided(2));
      if (row == Row.FAST_WITHDRAWING) {
        return;
      }
      on(new LeaseEvent.Withdrawn(2, Attempt.Outcome.WITHDRAWN)); // mutex 3 starts
      subject = 3;
      if (row == Row.MUTEX) {
        return;
      }
      on(new LeaseEvent.Granted(3, null, false)); // lease 4 starts
      on(new LeaseEvent.Granted(4, null, false)); // lease 5 starts
      subject = 5;
      switch (row) {
        case LEASE_WITHDRAWING -> on(new LeaseEvent.MutexLost(3));
        case EXPIRING -> on(new LeaseEvent.Deadline());
        case ENDED -> on(new LeaseEvent.Granted(5, null, false));
        default -> {}
      }
    }

    List<LeaseStep> on(LeaseEvent event) {
      now += 10;
      return new ArrayList<>(machine.on(event));
    }

    List<LeaseStep> fire(Column column) {
      LockException failure = new LockException("refused", null);
      return switch (column) {
        case FAST_DECIDED -> on(new LeaseEvent.FastDecided(subject));
        case GRANTED -> on(new LeaseEvent.Granted(subject, null, false));
        case GRANTED_LOST -> on(new LeaseEvent.Granted(subject, null, true));
        case GRANTED_FAILED -> on(new LeaseEvent.Granted(subject, failure, false));
        case WITHDRAWN_GRANTED -> on(new LeaseEvent.Withdrawn(subject, Attempt.Outcome.GRANTED));
        case WITHDRAWN -> on(new LeaseEvent.Withdrawn(subject, Attempt.Outcome.WITHDRAWN));
        case WITHDRAWN_FAILED -> on(new LeaseEvent.Withdrawn(subject, Attempt.Outcome.FAILED));
        case MUTEX_LOST -> on(new LeaseEvent.MutexLost(3));
        case DEADLINE -> on(new LeaseEvent.Deadline());
        case CANCEL -> on(new LeaseEvent.Cancel(new CompletableFuture<>(), null));
        case EXPIRED_GRANTED -> on(new LeaseEvent.Expired(subject, Waits.Ending.GRANTED));
        case EXPIRED_TIMED_OUT -> on(new LeaseEvent.Expired(subject, Waits.Ending.TIMED_OUT));
        case EXPIRED_UNREACHABLE -> on(new LeaseEvent.Expired(subject, Waits.Ending.UNREACHABLE));
        case STALE -> on(new LeaseEvent.Granted(1, null, false));
      };
    }
  }
}
