package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.internal.engine.Phase;
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
 * The place's table, without a server: every situation of a process's place meets every event, and
 * the steps and the place's phase that follow are checked against {@link #TABLE} (the table of
 * docs/design.md). Then what a cell cannot show: the fencing rule over a run of holds, the bound,
 * zero budgets, races between a grant and a withdrawal.
 */
@Timeout(10)
class PlaceStateTest {
  private static final String NODE = "/lock/_c_p-lock-0000000004";
  private static final long SESSION = 0x200;
  private static final long GRANT_TOKEN = 40;
  private static final long WRITE_ZXID = 57;

  /**
   * A situation of the place, built with members a, b, c...: the rows of the table.
   *
   * <ul>
   *   <li>NONE: no place, nobody waits.
   *   <li>TAKING: a waits; the place's attempt is under way.
   *   <li>HELD: b holds (the second hold of the place: the grant's token went to a), c waits.
   *   <li>FENCING: as HELD, and b asked for its fence: a write of the node is out.
   *   <li>AWAITING_READ: bound 1; b held, reached the bound and let go; the read sent at the bound
   *       is out; c waits.
   *   <li>AWAITING_WRITE: a took checks and let go; the write that fails them is out; b waits.
   * </ul>
   */
  enum Row {
    NONE,
    TAKING,
    HELD,
    FENCING,
    AWAITING_READ,
    AWAITING_WRITE
  }

  /** The columns: events, each aimed at the row's natural subject. */
  enum Column {
    JOIN,
    WITHDRAW,
    RELEASE,
    RELEASE_PLACE_LOST,
    PLACE_DECIDED,
    PLACE_GRANTED,
    PLACE_GRANTED_LOST,
    PLACE_ENDED,
    PLACE_AT_RISK,
    PLACE_LOST,
    QUEUE_CHANGED,
    CHECKED_ALONE,
    CHECKED_OTHERS,
    FENCE_ASKED,
    WRITTEN,
    WRITE_FAILED,
    WRITE_NODE_GONE
  }

  /**
   * Row x column -> the steps' types joined by "+" and the place's phase after them; "-" for no
   * step (phase unchanged), "!" for an IllegalStateException.
   */
  private static final String TABLE =
      """
      row             JOIN           WITHDRAW                    RELEASE                       RELEASE_PLACE_LOST            PLACE_DECIDED   PLACE_GRANTED  PLACE_GRANTED_LOST     PLACE_ENDED  PLACE_AT_RISK  PLACE_LOST                             QUEUE_CHANGED  CHECKED_ALONE             CHECKED_OTHERS         FENCE_ASKED          WRITTEN             WRITE_FAILED                 WRITE_NODE_GONE
      NONE            Take/TAKING    -                           !                             !                             -               -              -                      -            -              -                                      -              -                         -                      FenceRefused/NONE    -                   -                            -
      TAKING          -              WithdrawPlace+Ended/NONE    !                             !                             Decided/TAKING  Grant/HELD     GiveBack+Take/TAKING   Ended/NONE   -              -                                      -              -                         -                      FenceRefused/TAKING  -                   -                            -
      HELD            Decided/HELD   Ended/HELD                  Grant+Released/HELD           Released+GiveBack+Take/TAKING -               -              -                      -            Notify/HELD    Notify+GiveBack+Take/TAKING            -              -                         -                      Write/HELD           -                   -                            -
      FENCING         Decided/HELD   Ended/HELD                  FenceRefused+Released/HELD    FenceRefused+Released+GiveBack+Take/TAKING -  -              -                      -            Notify/HELD    Notify+FenceRefused+GiveBack+Take/TAKING -           -                         -                      -                    FenceReady/HELD     FenceRefused/HELD            Notify+FenceRefused+GiveBack+Take/TAKING
      AWAITING_READ   Decided/HELD   Ended/HELD                  Complete/HELD                 Complete/HELD                 -               -              -                      -            -              GiveBack+Take/TAKING                   -              Grant+CheckQueue/HELD     GiveBack+Take/TAKING   FenceRefused/HELD    -                   -                            -
      AWAITING_WRITE  Decided/HELD   Ended/HELD                  Complete/HELD                 Complete/HELD                 -               -              -                      -            -              GiveBack+Take/TAKING                   -              -                         -                      FenceRefused/HELD    Grant/HELD          GiveBack+Take/TAKING         GiveBack+Take/TAKING
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
    PlaceState.Phase before = fixture.state.placePhase();
    String actual;
    try {
      actual = StateTables.outcome(fixture.fire(column), fixture.state.placePhase());
    } catch (IllegalStateException e) {
      actual = "!";
    }
    assertThat(actual).isEqualTo(expected);
    if (expected.equals("-") || expected.equals("!")) {
      assertThat(fixture.state.placePhase()).as("unchanged").isEqualTo(before);
    }
  }

  /** A place in one of the rows' situations, and the events of the columns. */
  private static final class Fixture {
    final PlaceState state = new PlaceState(() -> 0); // no linger here: the clock stands
    final List<Contender> members = new ArrayList<>();
    Contender holder; // the member a RELEASE or FENCE_ASKED is about
    Contender waiter; // the member a WITHDRAW is about
    int write; // the write in flight, if any

    Fixture(Row row) {
      switch (row) {
        case NONE -> {
          holder = member(8);
          waiter = member(8);
        }
        case TAKING -> {
          Contender a = join(8);
          holder = a;
          waiter = a;
        }
        case HELD, FENCING -> {
          Contender a = join(8);
          granted(true);
          Contender b = join(8);
          Contender c = join(8);
          release(a);
          holder = b;
          waiter = c;
          if (row == Row.FENCING) {
            write = writeOf(state.on(new PlaceEvent.FenceAsked(b, new CompletableFuture<>())));
          }
        }
        case AWAITING_READ -> {
          Contender a = join(1);
          granted(true);
          Contender b = join(1);
          Contender c = join(1);
          release(a); // b holds, at the bound: the read goes out
          release(b); // the handoff to c awaits it
          holder = b;
          waiter = c;
        }
        case AWAITING_WRITE -> {
          Contender a = join(8);
          granted(true);
          Contender b = join(8);
          assertThat(state.takeChecks(a)).isNotNull();
          write = writeOf(release(a));
          holder = a;
          waiter = b;
        }
      }
    }

    List<PlaceStep> fire(Column column) {
      int place = state.currentPlace();
      return switch (column) {
        case JOIN -> state.on(new PlaceEvent.Join(member(8)));
        case WITHDRAW -> state.on(new PlaceEvent.Withdraw(waiter));
        case RELEASE -> state.on(new PlaceEvent.Release(holder, place, false, null));
        case RELEASE_PLACE_LOST -> state.on(new PlaceEvent.Release(holder, place, true, null));
        case PLACE_DECIDED -> state.on(new PlaceEvent.PlaceDecided(place));
        case PLACE_GRANTED -> state.on(grantedEvent(place, true, false));
        case PLACE_GRANTED_LOST -> state.on(grantedEvent(place, true, true));
        case PLACE_ENDED ->
            state.on(new PlaceEvent.PlaceEnded(place, new LockException("refused", null)));
        case PLACE_AT_RISK -> state.on(new PlaceEvent.PlaceChanged(place, LockState.AT_RISK));
        case PLACE_LOST -> state.on(new PlaceEvent.PlaceChanged(place, LockState.LOST));
        case QUEUE_CHANGED -> state.on(new PlaceEvent.QueueChanged(place));
        case CHECKED_ALONE -> state.on(new PlaceEvent.QueueChecked(place, true, false));
        case CHECKED_OTHERS -> state.on(new PlaceEvent.QueueChecked(place, false, false));
        case FENCE_ASKED -> state.on(new PlaceEvent.FenceAsked(holder, new CompletableFuture<>()));
        case WRITTEN -> state.on(new PlaceEvent.FenceWritten(place, write, WRITE_ZXID, 1, false));
        case WRITE_FAILED ->
            state.on(
                new PlaceEvent.FenceFailed(place, write, false, new LockException("lost", null)));
        case WRITE_NODE_GONE ->
            state.on(
                new PlaceEvent.FenceFailed(place, write, true, new LockException("gone", null)));
      };
    }

    Contender member(int bound) {
      Contender member = new Contender(bound, null);
      members.add(member);
      return member;
    }

    Contender join(int bound) {
      Contender member = member(bound);
      state.on(new PlaceEvent.Join(member));
      return member;
    }

    void granted(boolean alone) {
      state.on(grantedEvent(state.currentPlace(), alone, false));
    }

    List<PlaceStep> release(Contender member) {
      return state.on(new PlaceEvent.Release(member, state.currentPlace(), false, null));
    }
  }

  private static PlaceEvent.PlaceGranted grantedEvent(int place, boolean alone, boolean lost) {
    return new PlaceEvent.PlaceGranted(place, NODE, SESSION, GRANT_TOKEN, false, alone, lost);
  }

  private static int writeOf(List<PlaceStep> steps) {
    return steps.stream()
        .filter(PlaceStep.Write.class::isInstance)
        .map(step -> ((PlaceStep.Write) step).write())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no write in " + steps));
  }

  private static <T extends PlaceStep> T only(List<PlaceStep> steps, Class<T> type) {
    List<T> found = steps.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("%s in %s", type.getSimpleName(), steps).hasSize(1);
    return found.get(0);
  }

  // ---- a connection at risk, a loss not heard yet ----

  @Test
  void aReleaseWhileThePlaceIsAtRisk_handsNothingOn_untilThePlaceIsHeldAgain() {
    Fixture place = new Fixture(Row.HELD);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));

    List<PlaceStep> steps = place.release(place.holder);

    assertThat(steps).as("no grant in memory beside a holder elsewhere").hasSize(1);
    assertThat(steps.get(0)).isInstanceOf(PlaceStep.Released.class);
    assertThat(place.state.phaseOf(place.waiter)).isEqualTo(Phase.WAITING);
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.HELD);

    List<PlaceStep> back = place.state.on(new PlaceEvent.PlaceChanged(1, LockState.HELD));
    assertThat(only(back, PlaceStep.Grant.class).member()).isEqualTo(place.waiter);
    assertThat(only(back, PlaceStep.Grant.class).atRisk()).isFalse();
  }

  @Test
  void aReleaseWhileThePlaceIsAtRisk_thenItsLoss_sendsTheWaiterToANewPlace() {
    Fixture place = new Fixture(Row.HELD);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));
    place.release(place.holder);

    List<PlaceStep> lost = place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST));

    assertThat(lost.stream().filter(PlaceStep.Grant.class::isInstance)).isEmpty();
    assertThat(only(lost, PlaceStep.Take.class)).isEqualTo(new PlaceStep.Take(2));
    assertThat(place.state.phaseOf(place.waiter)).isEqualTo(Phase.WAITING);
  }

  @Test
  void aReleaseWhileThePlaceIsAtRisk_withNobodyWaiting_givesItBack() {
    Fixture place = new Fixture(Row.HELD);
    place.state.on(new PlaceEvent.Withdraw(place.waiter));
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));

    List<PlaceStep> steps = place.release(place.holder);

    assertThat(only(steps, PlaceStep.GiveBack.class).place()).isEqualTo(1);
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.NONE);
  }

  @Test
  void aMemberJoiningAKeptPlaceKnownLost_beforeItsNotice_isNotGrantedOnIt() {
    PlaceState state = new PlaceState(() -> 0);
    Contender a = new Contender(8, 1_000, null);
    state.on(new PlaceEvent.Join(a));
    state.on(grantedEvent(1, true, false));
    state.on(new PlaceEvent.Release(a, 1, false, null));
    assertThat(state.placePhase()).isEqualTo(PlaceState.Phase.LINGERING);
    Contender b = new Contender(8, null);

    List<PlaceStep> steps = state.on(new PlaceEvent.Join(b, 1, true));

    assertThat(steps.stream().filter(PlaceStep.Grant.class::isInstance)).isEmpty();
    assertThat(only(steps, PlaceStep.Take.class)).isEqualTo(new PlaceStep.Take(2));
    assertThat(state.phaseOf(b)).isEqualTo(Phase.WAITING);
  }

  // ---- the fencing rule over a run of local holds ----

  @Test
  void theFirstHoldOfAPlace_takesTheGrantsToken_andTheNextOneToAskWritesTheNode() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.join(8);
    Contender b = place.join(8);
    assertThat(only(place.state.on(grantedEvent(1, true, false)), PlaceStep.Grant.class).token())
        .as("the first hold keeps the grant's token")
        .isEqualTo(GRANT_TOKEN);

    place.release(a);
    assertThat(a.token).isEqualTo(GRANT_TOKEN);
    assertThat(b.token).as("nothing asked yet: no write").isZero();
    List<PlaceStep> asked = place.state.on(new PlaceEvent.FenceAsked(b, new CompletableFuture<>()));
    int write = writeOf(asked);
    assertThat(place.state.heldBy(b).token()).as("not before the write landed").isZero();

    only(
        place.state.on(new PlaceEvent.FenceWritten(1, write, WRITE_ZXID, 1, false)),
        PlaceStep.FenceReady.class);
    assertThat(place.state.heldBy(b)).isEqualTo(new PlaceState.Held(NODE, SESSION, WRITE_ZXID, 1));
  }

  @Test
  void aTokenNobodyTook_isHandedOutForFree() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.join(8);
    place.granted(true);
    Contender b = place.join(8);
    assertThat(place.state.takeChecks(a)).isNotNull(); // a's checks: the handoff writes first
    int write = writeOf(place.release(a));

    List<PlaceStep> written =
        place.state.on(new PlaceEvent.FenceWritten(1, write, WRITE_ZXID, 1, false));
    assertThat(only(written, PlaceStep.Grant.class).token())
        .as("the handoff's write is b's token, at no cost")
        .isEqualTo(WRITE_ZXID);
    assertThat(place.state.on(new PlaceEvent.FenceAsked(b, new CompletableFuture<>())))
        .containsExactly(new PlaceStep.FenceReady(b));
    assertThat(place.state.takeChecks(b).version()).isEqualTo(1);
  }

  @Test
  void aHoldWithoutChecks_isHandedOnWithoutAWrite() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.join(8);
    place.granted(true);
    Contender b = place.join(8);
    place.state.on(new PlaceEvent.FenceAsked(a, new CompletableFuture<>())); // a token only

    assertThat(place.release(a))
        .extracting(step -> step.getClass().getSimpleName())
        .containsExactly("Grant", "Released");
    assertThat(b.token).isZero();
  }

  @Test
  void aPlaceGrantedBehindAnotherParticipant_goesBackAtTheBound() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.join(2);
    place.granted(false); // the granting read saw someone else
    Contender b = place.join(2);
    Contender c = place.join(2);
    Contender d = place.join(2);

    assertThat(place.release(a)).extracting(Object::getClass).contains(PlaceStep.Grant.class);
    assertThat(place.release(b)).extracting(Object::getClass).contains(PlaceStep.Grant.class);
    assertThat(place.release(c))
        .as("two handoffs in a row: back to the tail")
        .extracting(step -> step.getClass().getSimpleName())
        .containsExactly("Released", "GiveBack", "Take");
    assertThat(d.phase).isEqualTo(Phase.WAITING);
  }

  @Test
  void aChangeHeardBeforeTheAnswer_givesThePlaceBack_thoughTheReadFoundItAlone() {
    Fixture place = new Fixture(Row.AWAITING_READ);
    place.state.on(new PlaceEvent.QueueChanged(1));

    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, true, false)))
        .extracting(step -> step.getClass().getSimpleName())
        .containsExactly("GiveBack", "Take");
  }

  @Test
  void anAnswerThatFindsThePlaceLost_givesItBack_insteadOfHandingItOn() {
    Fixture place = new Fixture(Row.AWAITING_READ);

    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, true, true)))
        .extracting(step -> step.getClass().getSimpleName())
        .containsExactly("GiveBack", "Take");
  }

  // ---- zero budgets and races ----

  @Test
  void aMemberJoiningWhileThePlaceWaitsBehindSomeone_isDecidedAtOnce() {
    Fixture place = new Fixture(Row.TAKING);
    place.state.on(new PlaceEvent.PlaceDecided(1));
    Contender late = place.member(8);

    assertThat(place.state.on(new PlaceEvent.Join(late)))
        .containsExactly(new PlaceStep.Decided(late));
  }

  @Test
  void aWithdrawalAfterTheGrant_changesNothing_andTheMemberHolds() {
    Fixture place = new Fixture(Row.TAKING);
    Contender a = place.waiter;
    place.granted(true);

    assertThat(place.state.on(new PlaceEvent.Withdraw(a))).isEmpty();
    assertThat(place.state.phaseOf(a)).isEqualTo(Phase.HELD);
  }

  @Test
  void aWithdrawalBeforeTheGrant_leavesTheLateGrantToTheRunner() {
    Fixture place = new Fixture(Row.TAKING);
    place.state.on(new PlaceEvent.Withdraw(place.waiter));

    assertThat(place.state.on(grantedEvent(1, true, false)))
        .as("the withdrawn attempt's grant: WithdrawPlace releases it")
        .isEmpty();
    assertThat(place.state.phaseOf(place.waiter)).isEqualTo(Phase.WITHDRAWN);
  }

  @Test
  void newsOfAPlaceGivenBack_isIgnored() {
    Fixture place = new Fixture(Row.HELD);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST)); // given back; c takes place 2

    assertThat(place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST))).isEmpty();
    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, true, false))).isEmpty();
    assertThat(place.state.currentPlace()).isEqualTo(2);
  }

  @Test
  void aLostHolder_cannotHaveAFence_andItsReleaseAnnouncesTheLoss() {
    Fixture place = new Fixture(Row.HELD);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST));

    assertThat(place.state.on(new PlaceEvent.FenceAsked(place.holder, new CompletableFuture<>())))
        .hasOnlyElementsOfType(PlaceStep.FenceRefused.class);
    PlaceStep.Released released =
        only(
            place.state.on(new PlaceEvent.Release(place.holder, 2, false, null)),
            PlaceStep.Released.class);
    assertThat(released.lostReason()).contains("lost");
  }

  @Test
  void releasingAMemberNeverGranted_throws() {
    Fixture place = new Fixture(Row.HELD);
    assertThatThrownBy(() -> place.release(place.waiter))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("never granted");
  }

  @Test
  void theTablesRows_areWhatTheirNamesSay() {
    Fixture held = new Fixture(Row.HELD);
    assertThat(held.state.heldBy(held.holder)).isNotNull();
    assertThat(held.state.phaseOf(held.waiter)).isEqualTo(Phase.WAITING);
    Fixture read = new Fixture(Row.AWAITING_READ);
    assertThat(read.state.phaseOf(read.holder)).isEqualTo(Phase.RELEASED);
    assertThat(read.state.placePhase()).isEqualTo(PlaceState.Phase.HELD);
    Fixture write = new Fixture(Row.AWAITING_WRITE);
    assertThat(write.write).isPositive();
    assertThat(write.state.phaseOf(write.waiter)).isEqualTo(Phase.WAITING);
  }
}
