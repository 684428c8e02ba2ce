package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The election's table, without a server: every situation of a participant meets every event, and
 * the steps and the situation that follow are checked against {@link #TABLE} (the table of
 * docs/design.md). Then what a cell cannot show: terms in a row, the backoff, and the order of what
 * listeners hear.
 */
@Timeout(10)
class ElectionMachineTest {
  private static final long EPOCH = 0x1_0000_0042L;

  /**
   * A participant in one of the rows' situations (attempts are numbered as started).
   *
   * <ul>
   *   <li>LATENT: made, not started.
   *   <li>WAITING: started; attempt 1 is in the queue.
   *   <li>LEADING: attempt 1 was granted: term 1 leads, with epoch {@link #EPOCH}.
   *   <li>AT_RISK: as LEADING, and its connection was suspended.
   *   <li>RETRYING: attempt 1 failed; the backoff runs.
   *   <li>RELEASING: term 1 was given up; its node is being deleted.
   *   <li>IDLE: attempt 1 failed because the client was closed.
   *   <li>CLOSED: closed while attempt 1 waited.
   * </ul>
   */
  enum Row {
    LATENT,
    WAITING,
    LEADING,
    AT_RISK,
    RETRYING,
    RELEASING,
    IDLE,
    CLOSED
  }

  /**
   * The columns: events about attempt 1 (the attempt or term of every row), a stale attempt 9, or a
   * hold whose token is not the term's (STALE_CHANGE).
   */
  enum Column {
    START,
    CLOSE,
    GRANTED,
    GRANTED_LOST,
    FAILED,
    FAILED_CLIENT_CLOSED,
    AT_RISK,
    HELD,
    LOST,
    STALE_CHANGE,
    RELINQUISH,
    RELEASED,
    RETRY_DUE,
    STALE_GRANTED
  }

  /**
   * Row x column -> the steps' types joined by "+" and the situation after them; "-" for no step
   * (situation unchanged), "!" for an IllegalStateException.
   */
  private static final String TABLE =
      """
      row        START          CLOSE                          GRANTED                                 GRANTED_LOST           FAILED               FAILED_CLIENT_CLOSED  AT_RISK         HELD              LOST                          STALE_CHANGE  RELINQUISH   RELEASED              RETRY_DUE         STALE_GRANTED
      LATENT     Enqueue/WAITING Fail+Leave/CLOSED             -                                       -                      -                    -                     -               -                 -                             -             -            -                     -                 -
      WAITING    !              Fail+Leave/CLOSED              NewTerm+Tell+Complete+CheckTerm/LEADING Release+Enqueue/WAITING RetryLater/RETRYING Fail/IDLE             -               -                 -                             -             -            -                     -                 -
      LEADING    !              TermClosed+Tell+Fail+Leave/CLOSED -                                    -                      -                    -                     Tell/AT_RISK    -                 TermLost+Tell+Enqueue/WAITING -             =RELEASING   -                     -                 -
      AT_RISK    !              TermClosed+Tell+Fail+Leave/CLOSED -                                    -                      -                    -                     -               Tell/LEADING      TermLost+Tell+Enqueue/WAITING -             =RELEASING   -                     -                 -
      RETRYING   !              Fail+Leave/CLOSED              -                                       -                      -                    -                     -               -                 -                             -             -            -                     Enqueue/WAITING   -
      RELEASING  !              Fail+Leave/CLOSED              -                                       -                      -                    -                     -               -                 -                             -             -            Tell+Enqueue/WAITING  -                 -
      IDLE       !              Fail+Leave/CLOSED              -                                       -                      -                    -                     -               -                 -                             -             -            -                     -                 -
      CLOSED     !              -                              -                                       -                      -                    -                     -               -                 -                             -             -            -                     -                 -
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
    ElectionMachine.Situation before = fixture.machine.situation();
    String actual;
    try {
      List<ElectionStep> steps = fixture.fire(column);
      ElectionMachine.Situation after = fixture.machine.situation();
      actual = steps.isEmpty() && after != before ? "=" + after : StateTables.outcome(steps, after);
    } catch (IllegalStateException e) {
      actual = "!";
    }
    assertThat(actual).isEqualTo(expected);
  }

  // ---- what a cell cannot show ----

  @Test
  void aTermLostBeforeItExisted_isFoundByItsCheck_andTheParticipantQueuesAgain() {
    Fixture run = new Fixture(Row.WAITING);
    assertThat(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST)))
        .as("no term yet: the notice is not the term's")
        .isEmpty();
    List<ElectionStep> steps = run.on(new ElectionEvent.Granted(1, EPOCH));
    assertThat(steps).last().isEqualTo(new ElectionStep.CheckTerm(1));
    // CheckTerm reads the hold: lost.
    assertThat(types(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST))))
        .isEqualTo("TermLost+Tell+Enqueue");
    assertThat(run.machine.situation()).isEqualTo(ElectionMachine.Situation.WAITING);
  }

  @Test
  void listenersHearElected_atRisk_restored_lost_inOrder_andTheNextTermIsNew() {
    Fixture run = new Fixture(Row.WAITING);
    List<ElectionStep> told = new ArrayList<>();
    told.addAll(run.on(new ElectionEvent.Granted(1, EPOCH)));
    told.addAll(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.AT_RISK)));
    told.addAll(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.AT_RISK)));
    told.addAll(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.HELD)));
    told.addAll(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.HELD)));
    told.addAll(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST)));
    told.addAll(run.on(new ElectionEvent.Granted(2, EPOCH + 7)));
    assertThat(told.stream().filter(ElectionStep.Tell.class::isInstance))
        .containsExactly(
            new ElectionStep.Tell(ElectionStep.News.ELECTED, 1),
            new ElectionStep.Tell(ElectionStep.News.AT_RISK, 1),
            new ElectionStep.Tell(ElectionStep.News.RESTORED, 1),
            new ElectionStep.Tell(ElectionStep.News.LOST, 1),
            new ElectionStep.Tell(ElectionStep.News.ELECTED, 2));
    assertThat(run.on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST)))
        .as("the old term's notice")
        .isEmpty();
  }

  @Test
  void eachTermCompletesTheFutureWaitedForBeforeIt_andANewOneWaitsForTheNext() {
    Fixture run = new Fixture(Row.WAITING);
    CompletableFuture<Leadership> first = run.machine.next();
    List<ElectionStep> steps = run.on(new ElectionEvent.Granted(1, EPOCH));
    assertThat(steps).contains(new ElectionStep.Complete(first, 1));
    assertThat(run.machine.next()).isNotSameAs(first);
  }

  @Test
  void failedAttemptsInARow_backOffDoubling_upToTheBound_andAGrantResetsIt() {
    Fixture run = new Fixture(Row.WAITING);
    List<Long> delays = new ArrayList<>();
    for (int attempt = 1; attempt <= 8; attempt++) {
      delays.add(
          retryDelay(
              run.on(new ElectionEvent.Failed(attempt, new LockException("x", null), false))));
      run.on(new ElectionEvent.RetryDue());
    }
    assertThat(delays).containsExactly(100L, 200L, 400L, 800L, 1_600L, 3_200L, 5_000L, 5_000L);
    run.on(new ElectionEvent.Granted(9, EPOCH));
    run.on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST));
    assertThat(
            retryDelay(run.on(new ElectionEvent.Failed(10, new LockException("x", null), false))))
        .isEqualTo(100L);
  }

  @Test
  void startingTwice_orAfterClose_isRefused() {
    Fixture run = new Fixture(Row.WAITING);
    assertThatThrownBy(() -> run.on(new ElectionEvent.Start()))
        .isInstanceOf(IllegalStateException.class);
    run.on(new ElectionEvent.Close(new CompletableFuture<>()));
    assertThatThrownBy(() -> run.on(new ElectionEvent.Start()))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aCloseNamesTheWaitingAttemptAndTheTerm_forTheCallerToLeave() {
    Fixture run = new Fixture(Row.LEADING);
    CompletableFuture<Void> reached = new CompletableFuture<>();
    assertThat(run.on(new ElectionEvent.Close(reached)))
        .last()
        .isEqualTo(new ElectionStep.Leave(ElectionMachine.NONE, 1, reached));
  }

  @Test
  void aCloseWhileATermIsGivenUp_namesThatTerm_forTheCallerToWaitForItsNode() {
    Fixture run = new Fixture(Row.RELEASING);
    CompletableFuture<Void> reached = new CompletableFuture<>();
    assertThat(run.on(new ElectionEvent.Close(reached)))
        .as("the term's giver deletes its node; the close returns once it is gone")
        .containsExactly(
            new ElectionStep.Fail(run.machine.next(), ElectionStep.Ending.CLOSED),
            new ElectionStep.Leave(ElectionMachine.NONE, 1, reached));
    assertThat(types(run.on(new ElectionEvent.Released(1))))
        .as("lost is told once, when the node is gone")
        .isEqualTo("Tell");
  }

  private static long retryDelay(List<ElectionStep> steps) {
    assertThat(steps).hasSize(1);
    return ((ElectionStep.RetryLater) steps.get(0)).delayMillis();
  }

  private static String types(List<ElectionStep> steps) {
    return String.join("+", steps.stream().map(step -> step.getClass().getSimpleName()).toList());
  }

  /** A participant in one of the rows' situations, and the events of the columns. */
  private static final class Fixture {
    final ElectionMachine machine = new ElectionMachine();

    Fixture(Row row) {
      if (row == Row.LATENT) {
        return;
      }
      on(new ElectionEvent.Start()); // attempt 1
      switch (row) {
        case LEADING -> on(new ElectionEvent.Granted(1, EPOCH));
        case AT_RISK -> {
          on(new ElectionEvent.Granted(1, EPOCH));
          on(new ElectionEvent.StateChanged(EPOCH, LockState.AT_RISK));
        }
        case RETRYING -> on(new ElectionEvent.Failed(1, new LockException("refused", null), false));
        case RELEASING -> {
          on(new ElectionEvent.Granted(1, EPOCH));
          on(new ElectionEvent.Relinquish(1));
        }
        case IDLE -> on(new ElectionEvent.Failed(1, new LockException("closed", null), true));
        case CLOSED -> on(new ElectionEvent.Close(new CompletableFuture<>()));
        default -> {}
      }
    }

    List<ElectionStep> on(ElectionEvent event) {
      return machine.on(event);
    }

    List<ElectionStep> fire(Column column) {
      LockException failure = new LockException("refused", null);
      return switch (column) {
        case START -> on(new ElectionEvent.Start());
        case CLOSE -> on(new ElectionEvent.Close(new CompletableFuture<>()));
        case GRANTED -> on(new ElectionEvent.Granted(1, EPOCH));
        case GRANTED_LOST -> on(new ElectionEvent.GrantedLost(1));
        case FAILED -> on(new ElectionEvent.Failed(1, failure, false));
        case FAILED_CLIENT_CLOSED -> on(new ElectionEvent.Failed(1, failure, true));
        case AT_RISK -> on(new ElectionEvent.StateChanged(EPOCH, LockState.AT_RISK));
        case HELD -> on(new ElectionEvent.StateChanged(EPOCH, LockState.HELD));
        case LOST -> on(new ElectionEvent.StateChanged(EPOCH, LockState.LOST));
        case STALE_CHANGE -> on(new ElectionEvent.StateChanged(EPOCH - 1, LockState.LOST));
        case RELINQUISH -> on(new ElectionEvent.Relinquish(1));
        case RELEASED -> on(new ElectionEvent.Released(1));
        case RETRY_DUE -> on(new ElectionEvent.RetryDue());
        case STALE_GRANTED -> on(new ElectionEvent.Granted(9, EPOCH));
      };
    }
  }
}
