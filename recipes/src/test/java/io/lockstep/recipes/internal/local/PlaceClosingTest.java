package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The place when its lock objects close, without a server: the last open lock object's close
 * (UNUSED) and a lock object opening again (USED) meet each situation of a place, then what a cell
 * cannot show: what the next events do to an unused place, that it asks to be dropped once idle and
 * only once, and that a lock object opening again keeps it.
 *
 * <p>Rows (members a, b, c; every member asked for a linger):
 *
 * <ul>
 *   <li>NONE: no place, nobody waits.
 *   <li>TAKING: a waits; the place's attempt is under way.
 *   <li>HELD: a holds.
 *   <li>HELD_WAITED: a holds, b waits.
 *   <li>LINGERING: a held the place (granted alone) and let go; nobody waits.
 *   <li>AWAITING_WRITE: a took checks and let go; the write that fails them is out; b waits.
 * </ul>
 */
@Timeout(10)
class PlaceClosingTest {
  private static final String NODE = "/lock/_c_p-lock-0000000004";
  private static final long LINGER = 1_000_000_000L;

  enum Row {
    NONE,
    TAKING,
    HELD,
    HELD_WAITED,
    LINGERING,
    AWAITING_WRITE
  }

  enum Column {
    UNUSED,
    USED
  }

  /** Row x column: the steps' types joined by "+" and the place's phase; "-" for none. */
  private static final String TABLE =
      """
      row             UNUSED               USED
      NONE            Retire/NONE          -
      TAKING          -                    -
      HELD            -                    -
      HELD_WAITED     -                    -
      LINGERING       GiveBack+Retire/NONE -
      AWAITING_WRITE  -                    -
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
    Place place = new Place();
    place.row(row);
    PlaceState.Phase before = place.state.placePhase();
    List<PlaceStep> steps =
        place.state.on(column == Column.UNUSED ? new PlaceEvent.Unused() : new PlaceEvent.Used());
    assertThat(StateTables.outcome(steps, place.state.placePhase())).isEqualTo(expected);
    if (expected.equals("-")) {
      assertThat(place.state.placePhase()).as("unchanged").isEqualTo(before);
    }
  }

  // ---- what follows on an unused place ----

  @Test
  void aHoldOfAnUnusedPlace_givesItBackAtItsRelease_insteadOfLingering() {
    Place place = new Place();
    Contender a = place.firstHold();
    place.state.on(new PlaceEvent.Unused());

    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack", "Retire");
    assertThat(place.state.isRetirable()).isTrue();
  }

  @Test
  void aWaiterOfAnUnusedPlace_isHandedTheLock_andItsReleaseGivesThePlaceBack() {
    Place place = new Place();
    Contender a = place.firstHold();
    Contender b = place.join();
    place.state.on(new PlaceEvent.Unused());

    assertThat(names(place.release(a))).containsExactly("Grant", "Released");
    assertThat(place.state.heldBy(b)).as("members under way are not touched").isNotNull();
    assertThat(place.state.isRetirable()).isFalse();
    assertThat(names(place.release(b))).containsExactly("Released", "GiveBack", "Retire");
  }

  @Test
  void theLastWaiterOfAnUnusedPlaceWithdrawing_withdrawsThePlace_andAsksToDropIt() {
    Place place = new Place();
    Contender a = place.join();
    place.state.on(new PlaceEvent.Unused());

    assertThat(names(place.state.on(new PlaceEvent.Withdraw(a))))
        .containsExactly("WithdrawPlace", "Ended", "Retire");
    assertThat(a.phase).isEqualTo(Phase.WITHDRAWN);
  }

  @Test
  void anUnusedPlaceLostWhileHeld_isGivenBack_andDroppedOnceIdle() {
    Place place = new Place();
    Contender a = place.firstHold();
    place.state.on(new PlaceEvent.Unused());

    assertThat(names(place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST))))
        .containsExactly("Notify", "GiveBack", "Retire");
    assertThat(names(place.release(a))).as("the loss announced").containsExactly("Released");
  }

  @Test
  void anUnusedPlaceAsksToBeDroppedOnce_whateverFollows() {
    Place place = new Place();
    place.state.on(new PlaceEvent.Unused());

    assertThat(place.state.on(new PlaceEvent.QueueChanged(1))).as("stale news").isEmpty();
    assertThat(place.state.on(new PlaceEvent.LingerDue(1, 0))).isEmpty();
    assertThat(place.state.isRetirable()).isTrue();
  }

  // ---- used again ----

  @Test
  void aLockObjectOpeningAgain_keepsThePlace_andItLingersAsBefore() {
    Place place = new Place();
    Contender a = place.firstHold();
    place.state.on(new PlaceEvent.Unused());
    place.state.on(new PlaceEvent.Used());

    assertThat(names(place.release(a))).containsExactly("LingerTimer", "Released");
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.LINGERING);
    assertThat(place.state.isRetirable()).isFalse();
  }

  @Test
  void aPlaceUsedAgainAfterItAskedToBeDropped_isNotRetirable_andAsksAgainWhenNextUnused() {
    Place place = new Place();
    assertThat(names(place.state.on(new PlaceEvent.Unused()))).containsExactly("Retire");
    place.state.on(new PlaceEvent.Used());
    assertThat(place.state.isRetirable()).as("the runner's drop finds it used").isFalse();

    assertThat(names(place.state.on(new PlaceEvent.Unused()))).containsExactly("Retire");
  }

  @Test
  void aPlaceNeverClosed_neverAsksToBeDropped() {
    Place place = new Place();
    Contender a = place.join();
    place.state.on(new PlaceEvent.Withdraw(a));

    assertThat(place.state.isRetirable()).isFalse();
    assertThat(names(place.state.on(new PlaceEvent.Used()))).isEmpty();
  }

  /** A place on a clock the test moves, and its members, all lingering ones. */
  private static final class Place {
    long now = 5_000;
    final PlaceState state = new PlaceState(() -> now);

    void row(Row row) {
      switch (row) {
        case NONE -> {}
        case TAKING -> join();
        case HELD -> firstHold();
        case HELD_WAITED -> {
          firstHold();
          join();
        }
        case LINGERING -> release(firstHold());
        case AWAITING_WRITE -> {
          Contender a = firstHold();
          join();
          assertThat(state.takeChecks(a)).isNotNull();
          assertThat(names(release(a))).contains("Write");
        }
      }
    }

    Contender join() {
      Contender member = new Contender(8, LINGER, null);
      state.on(new PlaceEvent.Join(member));
      return member;
    }

    /** A member that holds the place, granted alone (its child watch armed). */
    Contender firstHold() {
      Contender member = join();
      state.on(new PlaceEvent.PlaceGranted(1, NODE, 0x200, 40, false, true, false));
      return member;
    }

    List<PlaceStep> release(Contender member) {
      return state.on(new PlaceEvent.Release(member, state.currentPlace(), false, null));
    }
  }

  private static List<String> names(List<PlaceStep> steps) {
    return steps.stream().map(step -> step.getClass().getSimpleName()).toList();
  }
}
