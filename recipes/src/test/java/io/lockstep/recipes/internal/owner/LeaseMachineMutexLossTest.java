package io.lockstep.recipes.internal.owner;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.owner.LeaseMachineTest.Fixture;
import io.lockstep.recipes.internal.owner.LeaseMachineTest.Row;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code locks} mutex lost just as the request hears something else: the grant of the lease
 * that waits under it, that lease's failure, its withdrawal, the deadline and its expiry, a cancel,
 * or the mutex's own grant. Both orders of each race, every step out checked. Whatever the order,
 * the request ends with every lease it was granted (the mutex given back) or with none of them
 * (each given back once), and no lease of ours waits without the mutex.
 *
 * <p>Unless a test says otherwise: a request for two leases whose mutex 3 is held, lease 4 granted
 * and lease 5 waiting ({@link Row#LEASE}), or whose mutex 3 is in flight ({@link Row#MUTEX}).
 */
@Timeout(10)
class LeaseMachineMutexLossTest {
  private static final int NONE = LeaseMachine.NONE;

  private static List<LeaseStep> mutexLost(Fixture run, int mutex) {
    return run.on(new LeaseEvent.MutexLost(mutex));
  }

  private static List<LeaseStep> granted(Fixture run, int attempt) {
    return run.on(new LeaseEvent.Granted(attempt, null, false));
  }

  private static List<LeaseStep> withdrawn(Fixture run, int attempt, Attempt.Outcome outcome) {
    return run.on(new LeaseEvent.Withdrawn(attempt, outcome));
  }

  private static List<LeaseStep> expired(Fixture run, int attempt, Waits.Ending ending) {
    return run.on(new LeaseEvent.Expired(attempt, ending));
  }

  // ---- the waiting lease's grant ----

  @Test
  void theLeaseGranted_thenTheMutexLost_succeedsWithBothLeases_andGivesTheMutexBack() {
    Fixture run = new Fixture(Row.LEASE);
    assertThat(granted(run, 5)).containsExactly(new LeaseStep.Succeed(List.of(4, 5), 3));
    assertThat(mutexLost(run, 3)).as("ended: the success releases the mutex").isEmpty();
  }

  @Test
  void theMutexLost_thenTheLeaseGranted_keepsTheGrantItsWithdrawalFinds() {
    Fixture run = new Fixture(Row.LEASE);
    assertThat(mutexLost(run, 3))
        .containsExactly(new LeaseStep.Release(3), new LeaseStep.Withdraw(5, null));
    assertThat(granted(run, 5)).as("heard through the withdrawal").isEmpty();
    assertThat(withdrawn(run, 5, Attempt.Outcome.GRANTED))
        .containsExactly(new LeaseStep.Succeed(List.of(4, 5), NONE));
    assertThat(mutexLost(run, 3)).as("told twice").isEmpty();
  }

  @Test
  void theLeaseFailed_thenTheMutexLost_failsWithEverythingGivenBackOnce() {
    Fixture run = new Fixture(Row.LEASE);
    LockException failure = new LockException("refused", null);
    assertThat(run.on(new LeaseEvent.Granted(5, failure, false)))
        .containsExactly(
            new LeaseStep.Finish(
                5, List.of(4), 3, run.now + Waits.GRACE_NANOS, new LeaseStep.Failed(5, failure)));
    assertThat(mutexLost(run, 3)).isEmpty();
  }

  @Test
  void theMutexLost_thenTheLeaseFailed_failsWithoutReleasingTheMutexTwice() {
    Fixture run = new Fixture(Row.LEASE);
    mutexLost(run, 3);
    assertThat(withdrawn(run, 5, Attempt.Outcome.FAILED))
        .containsExactly(
            new LeaseStep.Finish(
                5, List.of(4), NONE, run.now + Waits.GRACE_NANOS, new LeaseStep.Failed(5, null)));
  }

  // ---- the deadline ----

  @Test
  void theDeadline_thenTheMutexLost_thenTheLeaseGrantedAtTheDeadline_succeeds() {
    Fixture run = new Fixture(Row.LEASE);
    assertThat(run.on(new LeaseEvent.Deadline()))
        .containsExactly(new LeaseStep.Expire(5, run.now + Waits.GRACE_NANOS));
    assertThat(mutexLost(run, 3)).as("ended: the ending gives the mutex back").isEmpty();
    assertThat(expired(run, 5, Waits.Ending.GRANTED))
        .containsExactly(new LeaseStep.Succeed(List.of(4, 5), 3));
  }

  @Test
  void theDeadline_thenTheMutexLost_thenTheLeaseTimedOut_givesEverythingBack() {
    Fixture run = new Fixture(Row.LEASE);
    run.on(new LeaseEvent.Deadline());
    long graceEnd = run.now + Waits.GRACE_NANOS;
    mutexLost(run, 3);
    assertThat(expired(run, 5, Waits.Ending.TIMED_OUT))
        .containsExactly(new LeaseStep.Finish(5, List.of(4), 3, graceEnd, new LeaseStep.Busy()));
  }

  @Test
  void theMutexLost_thenTheDeadline_succeedsIfTheWithdrawalFindsTheLeaseGranted() {
    Fixture run = new Fixture(Row.LEASE);
    mutexLost(run, 3);
    assertThat(run.on(new LeaseEvent.Deadline())).as("waits for the withdrawal").isEmpty();
    assertThat(withdrawn(run, 5, Attempt.Outcome.GRANTED))
        .containsExactly(new LeaseStep.Succeed(List.of(4, 5), NONE));
  }

  @Test
  void theMutexLost_thenTheDeadline_endsBusy_withoutTakingTheMutexAgain() {
    Fixture run = new Fixture(Row.LEASE);
    mutexLost(run, 3);
    run.on(new LeaseEvent.Deadline());
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(withdrawn(run, 5, Attempt.Outcome.WITHDRAWN))
        .containsExactly(new LeaseStep.Finish(5, List.of(4), NONE, graceEnd, new LeaseStep.Busy()));
  }

  // ---- a cancel ----

  @Test
  void aCancel_thenTheMutexLost_givesBackTheLeases_andTheMutex() {
    Fixture run = new Fixture(Row.LEASE);
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    assertThat(run.on(new LeaseEvent.Cancel(cleaned, null)))
        .containsExactly(new LeaseStep.Withdraw(5, AcquireOutcome.WITHDRAWN));
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(mutexLost(run, 3)).isEmpty();
    assertThat(withdrawn(run, 5, Attempt.Outcome.GRANTED))
        .containsExactly(
            new LeaseStep.Finish(
                5, List.of(4, 5), 3, graceEnd, new LeaseStep.Cancelled(cleaned, null)));
  }

  @Test
  void theMutexLost_thenACancel_givesBackTheLeases_andNotTheReleasedMutex() {
    Fixture run = new Fixture(Row.LEASE);
    mutexLost(run, 3);
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    assertThat(run.on(new LeaseEvent.Cancel(cleaned, null))).isEmpty();
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(withdrawn(run, 5, Attempt.Outcome.WITHDRAWN))
        .containsExactly(
            new LeaseStep.Finish(
                5, List.of(4), NONE, graceEnd, new LeaseStep.Cancelled(cleaned, null)));
  }

  // ---- the mutex's own grant ----

  @Test
  void theMutexGranted_thenLost_withdrawsTheLeaseThatStartedUnderIt() {
    Fixture run = new Fixture(Row.MUTEX);
    assertThat(granted(run, 3)).containsExactly(new LeaseStep.StartLease(4, true));
    assertThat(mutexLost(run, 3))
        .containsExactly(new LeaseStep.Release(3), new LeaseStep.Withdraw(4, null));
    assertThat(withdrawn(run, 4, Attempt.Outcome.WITHDRAWN))
        .containsExactly(new LeaseStep.Carry(4), new LeaseStep.StartMutex(5));
  }

  @Test
  void theMutexLostBeforeItsGrantIsHeard_isReleasedAndTakenAgain_andNoLeaseWaitsUnderIt() {
    Fixture run = new Fixture(Row.MUTEX);
    assertThat(mutexLost(run, 3))
        .as("a loss is told only after the grant: the mutex was granted, and is gone")
        .containsExactly(new LeaseStep.Release(3), new LeaseStep.StartMutex(4));
    assertThat(granted(run, 3)).as("the lost mutex's grant, heard late").isEmpty();
    assertThat(run.on(new LeaseEvent.Granted(3, null, true))).isEmpty();
    assertThat(granted(run, 4)).containsExactly(new LeaseStep.StartLease(5, true));
  }

  @Test
  void theMutexLostBeforeItsGrantIsHeard_thenTheDeadline_endsTheNewMutexOnly() {
    Fixture run = new Fixture(Row.MUTEX);
    mutexLost(run, 3);
    assertThat(run.on(new LeaseEvent.Deadline()))
        .containsExactly(new LeaseStep.Expire(4, run.now + Waits.GRACE_NANOS));
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(expired(run, 4, Waits.Ending.TIMED_OUT))
        .containsExactly(new LeaseStep.Finish(4, List.of(), 4, graceEnd, new LeaseStep.Busy()));
  }

  @Test
  void theDeadline_thenTheMutexLost_givesTheGrantedMutexBackOnce() {
    Fixture run = new Fixture(Row.MUTEX);
    run.on(new LeaseEvent.Deadline());
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(mutexLost(run, 3)).isEmpty();
    assertThat(expired(run, 3, Waits.Ending.GRANTED))
        .containsExactly(new LeaseStep.Finish(3, List.of(), 3, graceEnd, new LeaseStep.Busy()));
  }

  @Test
  void aCancel_thenTheMutexLost_givesTheGrantedMutexBackOnce() {
    Fixture run = new Fixture(Row.MUTEX);
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    run.on(new LeaseEvent.Cancel(cleaned, null));
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(mutexLost(run, 3)).isEmpty();
    assertThat(withdrawn(run, 3, Attempt.Outcome.GRANTED))
        .containsExactly(
            new LeaseStep.Finish(
                3, List.of(), 3, graceEnd, new LeaseStep.Cancelled(cleaned, null)));
  }

  // ---- several leases ----

  /** A request for three leases: mutex 2 held, leases 3 and 4 granted, lease 5 waiting. */
  private static Fixture threeLeasesTwoGranted() {
    Fixture run = new Fixture(3);
    run.on(new LeaseEvent.Begin()); // fast try 1
    run.on(new LeaseEvent.FastDecided(1));
    run.on(new LeaseEvent.Withdrawn(1, Attempt.Outcome.WITHDRAWN)); // carried on; mutex 2
    assertThat(granted(run, 2)).containsExactly(new LeaseStep.StartLease(3, true));
    assertThat(granted(run, 3)).containsExactly(new LeaseStep.StartLease(4, false));
    assertThat(granted(run, 4)).containsExactly(new LeaseStep.StartLease(5, false));
    return run;
  }

  @Test
  void severalLeases_theMutexLostAfterSomeWereGranted_givesThemBack_andStartsAgainUnderANewMutex() {
    Fixture run = threeLeasesTwoGranted();
    assertThat(mutexLost(run, 2))
        .containsExactly(new LeaseStep.Release(2), new LeaseStep.Withdraw(5, null));
    assertThat(withdrawn(run, 5, Attempt.Outcome.WITHDRAWN))
        .as("none held while queueing for the mutex")
        .containsExactly(
            new LeaseStep.Carry(5),
            new LeaseStep.Release(3),
            new LeaseStep.Release(4),
            new LeaseStep.StartMutex(6));
    assertThat(run.machine.granted()).isEmpty();
    assertThat(granted(run, 6)).containsExactly(new LeaseStep.StartLease(7, true));
    granted(run, 7);
    granted(run, 8);
    assertThat(granted(run, 9))
        .as("only the leases taken under the new mutex")
        .containsExactly(new LeaseStep.Succeed(List.of(7, 8, 9), 6));
  }

  @Test
  void severalLeases_theLastGrantedAsTheMutexIsLost_succeedsWithAllThree() {
    Fixture run = threeLeasesTwoGranted();
    mutexLost(run, 2);
    assertThat(withdrawn(run, 5, Attempt.Outcome.GRANTED))
        .containsExactly(new LeaseStep.Succeed(List.of(3, 4, 5), NONE));
  }

  @Test
  void severalLeases_theMutexLost_thenADeadline_givesEveryGrantedLeaseBackOnce() {
    Fixture run = threeLeasesTwoGranted();
    mutexLost(run, 2);
    run.on(new LeaseEvent.Deadline());
    long graceEnd = run.now + Waits.GRACE_NANOS;
    assertThat(withdrawn(run, 5, Attempt.Outcome.WITHDRAWN))
        .containsExactly(
            new LeaseStep.Finish(5, List.of(3, 4), NONE, graceEnd, new LeaseStep.Busy()));
  }
}
