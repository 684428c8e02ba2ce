package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;

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
 * A place kept after its last local release (lock caching), without a server, on a clock the test
 * drives. First the table: each lingering situation meets every event; then what a cell cannot
 * show: a loop alone sends nothing, the place goes back when someone else may queue, the timer, the
 * fencing rule across a linger, and the races between a give-back and a join.
 *
 * <p>Rows x columns (the cells of {@link #TABLE}):
 *
 * <ul>
 *   <li>LINGERING: a held the place (granted alone, its child watch armed) and let go; nobody
 *       waits.
 *   <li>LINGERING_CHECKS: as LINGERING, and a took ownership checks before it let go.
 *   <li>HELD_AGAIN: as LINGERING, then b joined and holds, granted in memory.
 * </ul>
 *
 * The columns: a join; the subject's release; the child watch fires (someone queued, or our node
 * went); the timer fires after the linger ran out or before; at risk, lost; the bound's read
 * answers; the subject asks for its fence; a stale grant; a withdrawal of a member not waiting.
 */
@Timeout(10)
class PlaceLingerTest {
  private static final String NODE = "/lock/_c_p-lock-0000000004";
  private static final long SESSION = 0x200;
  private static final long GRANT_TOKEN = 40;
  private static final long WRITE_ZXID = 57;
  private static final long LINGER = 1_000_000_000L;

  enum Row {
    LINGERING,
    LINGERING_CHECKS,
    HELD_AGAIN
  }

  enum Column {
    JOIN,
    RELEASE,
    QUEUE_CHANGED,
    DUE,
    DUE_EARLY,
    AT_RISK,
    LOST,
    CHECKED_OTHERS,
    FENCE_ASKED,
    STALE_GRANT,
    WITHDRAW
  }

  private static final String TABLE =
      """
      row               JOIN          RELEASE                QUEUE_CHANGED  DUE            DUE_EARLY              AT_RISK        LOST                   CHECKED_OTHERS  FENCE_ASKED              STALE_GRANT  WITHDRAW
      LINGERING         Grant/HELD    Complete/LINGERING     GiveBack/NONE  GiveBack/NONE  LingerTimer/LINGERING  GiveBack/NONE  GiveBack/NONE          -               FenceRefused/LINGERING   -            -
      LINGERING_CHECKS  Write/HELD    Complete/LINGERING     GiveBack/NONE  GiveBack/NONE  LingerTimer/LINGERING  GiveBack/NONE  GiveBack/NONE          -               FenceRefused/LINGERING   -            -
      HELD_AGAIN        Decided/HELD  Released/LINGERING     -              -              -                      Notify/HELD    Notify+GiveBack/NONE   -               Write/HELD               -            -
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
    Contender subject = place.row(row);
    PlaceState.Phase before = place.state.placePhase();
    List<PlaceStep> steps = place.fire(column, subject);
    assertThat(StateTables.outcome(steps, place.state.placePhase())).isEqualTo(expected);
    if (expected.equals("-")) {
      assertThat(place.state.placePhase()).as("unchanged").isEqualTo(before);
    }
  }

  /** A place on a clock the test moves, and its members. */
  private static final class Place {
    long now = 5_000;
    final PlaceState state = new PlaceState(() -> now);

    Contender row(Row row) {
      Contender a = firstHold(8);
      if (row == Row.LINGERING_CHECKS) {
        assertThat(state.takeChecks(a)).isNotNull();
      }
      assertThat(names(release(a))).containsExactly("LingerTimer", "Released");
      if (row != Row.HELD_AGAIN) {
        return a;
      }
      Contender b = join(8);
      assertThat(state.heldBy(b)).isNotNull();
      return b;
    }

    List<PlaceStep> fire(Column column, Contender subject) {
      int place = state.currentPlace();
      return switch (column) {
        case JOIN -> state.on(new PlaceEvent.Join(new Contender(8, LINGER, null)));
        case RELEASE -> release(subject);
        case QUEUE_CHANGED -> state.on(new PlaceEvent.QueueChanged(place));
        case DUE -> {
          now += LINGER;
          yield state.on(new PlaceEvent.LingerDue(place, now));
        }
        case DUE_EARLY -> state.on(new PlaceEvent.LingerDue(place, now + LINGER));
        case AT_RISK -> state.on(new PlaceEvent.PlaceChanged(place, LockState.AT_RISK));
        case LOST -> state.on(new PlaceEvent.PlaceChanged(place, LockState.LOST));
        case CHECKED_OTHERS -> state.on(new PlaceEvent.QueueChecked(place, false, false));
        case FENCE_ASKED -> state.on(new PlaceEvent.FenceAsked(subject, new CompletableFuture<>()));
        case STALE_GRANT -> state.on(granted(place, true));
        case WITHDRAW -> state.on(new PlaceEvent.Withdraw(new Contender(8, LINGER, null)));
      };
    }

    Contender join(int bound) {
      return join(bound, LINGER);
    }

    Contender join(int bound, long linger) {
      Contender member = new Contender(bound, linger, null);
      state.on(new PlaceEvent.Join(member));
      return member;
    }

    /** A member that holds the place, granted alone (its child watch armed). */
    Contender firstHold(int bound) {
      Contender member = join(bound);
      state.on(granted(1, true));
      return member;
    }

    List<PlaceStep> release(Contender member) {
      return state.on(new PlaceEvent.Release(member, state.currentPlace(), false, null));
    }

    /**
     * From a place given back (or none): a member joins, a new place is granted alone, and the
     * member lets go; the steps of the release.
     */
    List<PlaceStep> nextPlaceAlone() {
      Contender member = join(8);
      assertThat(state.placePhase()).isEqualTo(PlaceState.Phase.TAKING);
      state.on(granted(state.currentPlace(), true));
      return release(member);
    }

    /** A turn of strict alternation: our place, granted behind the other process, goes back. */
    void seeOthersAlternating() {
      Contender member = join(8);
      state.on(granted(state.currentPlace(), false));
      assertThat(names(release(member))).containsExactly("Released", "GiveBack");
    }
  }

  private static PlaceEvent.PlaceGranted granted(int place, boolean alone) {
    return new PlaceEvent.PlaceGranted(place, NODE, SESSION, GRANT_TOKEN, false, alone, false);
  }

  private static List<String> names(List<PlaceStep> steps) {
    return steps.stream().map(step -> step.getClass().getSimpleName()).toList();
  }

  // ---- what it saves ----

  @Test
  void aLoopAlone_takesThePlaceOnce_andThenSendsNothing_evenAtABoundOfOne() {
    Place place = new Place();
    List<PlaceStep> all = new ArrayList<>();
    Contender first = place.join(1);
    all.addAll(place.state.on(granted(1, true)));
    all.addAll(place.release(first));
    for (int i = 0; i < 1_000; i++) {
      Contender member = place.join(1);
      assertThat(place.state.heldBy(member)).as("held at once, in memory").isNotNull();
      all.addAll(place.release(member));
      place.now += 1_000;
    }

    assertThat(names(all))
        .as("no give-back, write, read or second timer while the linger lasts")
        .doesNotContain("GiveBack", "Take", "Write", "CheckQueue")
        .containsOnlyOnce("LingerTimer");
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.LINGERING);
  }

  @Test
  void withoutLinger_theLastReleaseGivesThePlaceBack() {
    Place place = new Place();
    Contender a = place.join(8, 0);
    place.state.on(granted(1, true));
    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack");
  }

  // ---- when the place is not kept ----
  @Test
  void aPlaceGrantedBehindAnotherParticipant_isGivenBack_forNoWatchTellsOfTheNext() {
    Place place = new Place();
    Contender a = place.join(8);
    place.state.on(granted(1, false));

    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack");
  }

  @Test
  void aChangeHeardWhileHeld_givesThePlaceBackAtTheRelease() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    assertThat(place.state.on(new PlaceEvent.QueueChanged(1))).as("a holds: nothing yet").isEmpty();

    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack");
  }

  @Test
  void aChangeHeardBeforeTheGrant_countsAsOneHeardAfter() {
    Place place = new Place();
    Contender a = place.join(8);
    place.state.on(new PlaceEvent.QueueChanged(1));
    place.state.on(granted(1, true));

    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack");
  }

  @Test
  void aHoldAtRisk_givesThePlaceBackAtItsRelease() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));

    assertThat(names(place.release(a))).containsExactly("Released", "GiveBack");
  }

  @Test
  void aReleaseOfALostPlace_givesItBack() {
    Place place = new Place();
    Contender a = place.firstHold(8);

    assertThat(names(place.state.on(new PlaceEvent.Release(a, 1, true, null))))
        .containsExactly("Released", "GiveBack");
  }

  @Test
  void aReadSentAtTheBound_thatFindsOthersWhileThePlaceLingers_givesItBack() {
    Place place = new Place();
    Contender a = place.firstHold(1);
    Contender b = place.join(1);
    assertThat(names(place.release(a))).contains("Grant", "CheckQueue");
    assertThat(names(place.release(b))).containsExactly("LingerTimer", "Released");

    assertThat(names(place.state.on(new PlaceEvent.QueueChecked(1, false, false))))
        .containsExactly("GiveBack");
  }

  @Test
  void aReadSentAtTheBound_thatFindsThePlaceAlone_keepsIt() {
    Place place = new Place();
    Contender a = place.firstHold(1);
    Contender b = place.join(1);
    place.release(a);
    place.release(b);

    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, true, false))).isEmpty();
    assertThat(place.state.heldBy(place.join(1))).isNotNull();
  }

  // ---- the pause after another participant was seen (adaptive linger) ----

  @Test
  void afterAnotherParticipantQueued_thePlaceIsNotKept_forTheLinger_thenItIsAgain() {
    Place place = new Place();
    place.release(place.firstHold(8));
    assertThat(names(place.state.on(new PlaceEvent.QueueChanged(1)))).containsExactly("GiveBack");

    assertThat(names(place.nextPlaceAlone()))
        .as("within the pause: given back, as without linger")
        .containsExactly("Released", "GiveBack");
    place.now += LINGER - 1;
    assertThat(names(place.nextPlaceAlone())).containsExactly("Released", "GiveBack");
    place.now += 1;
    assertThat(names(place.nextPlaceAlone()))
        .as("the pause ran out")
        .containsExactly("LingerTimer", "Released");
  }

  @Test
  void whileOthersKeepAsking_thePauseDoubles_upToItsCap_andASightingAfterItStartsAgain() {
    Place place = new Place();
    place.seeOthersAlternating(); // a pause of 1 linger begins
    for (int doublings = 1; doublings <= Linger.MAX_DOUBLINGS + 2; doublings++) {
      place.now += LINGER / 2; // within the pause under way
      place.seeOthersAlternating();
    }
    long cap = LINGER << Linger.MAX_DOUBLINGS;

    place.now += cap - 1;
    assertThat(names(place.nextPlaceAlone())).containsExactly("Released", "GiveBack");
    place.now += 1;
    assertThat(names(place.nextPlaceAlone()))
        .as("the pause is capped at the linger times 2^" + Linger.MAX_DOUBLINGS)
        .containsExactly("LingerTimer", "Released");

    place.state.on(new PlaceEvent.QueueChanged(place.state.currentPlace()));
    place.now += LINGER;
    assertThat(names(place.nextPlaceAlone()))
        .as("a sighting after the pause ran out: one linger again")
        .containsExactly("LingerTimer", "Released");
  }

  @Test
  void anAttemptQueuedBehindAnother_isASighting_too() {
    Place place = new Place();
    Contender a = place.join(8);
    place.state.on(new PlaceEvent.PlaceDecided(1)); // waits behind someone
    place.state.on(granted(1, true)); // alone by the time it was granted

    assertThat(names(place.release(a)))
        .as("the one ahead may come back: the pause began when we queued behind it")
        .containsExactly("Released", "GiveBack");
  }

  @Test
  void aProcessAlone_neverPauses_overAnyLengthOfTime() {
    Place place = new Place();
    for (int i = 0; i < 100; i++) {
      place.now += LINGER * 3; // each linger ran out, the place went back
      List<PlaceStep> steps = place.nextPlaceAlone();
      assertThat(names(steps)).containsExactly("LingerTimer", "Released");
      place.state.on(
          new PlaceEvent.LingerDue(
              place.state.currentPlace(), ((PlaceStep.LingerTimer) steps.get(0)).due()));
      place.now += LINGER;
      place.state.on(new PlaceEvent.LingerDue(place.state.currentPlace(), place.now));
      assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.NONE);
    }
  }

  // ---- the timer ----

  @Test
  void aTimerThatFiresEarly_isArmedAgainForWhatIsLeft() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    PlaceStep.LingerTimer first = (PlaceStep.LingerTimer) place.release(a).get(0);
    assertThat(first.delayNanos()).isEqualTo(LINGER);
    place.now += LINGER / 2;
    place.release(place.join(8)); // held and kept again: the linger now ends later

    place.now += LINGER / 2;
    List<PlaceStep> fired = place.state.on(new PlaceEvent.LingerDue(1, first.due()));
    assertThat(fired).hasSize(1);
    assertThat(((PlaceStep.LingerTimer) fired.get(0)).delayNanos()).isEqualTo(LINGER / 2);

    place.now += LINGER / 2;
    assertThat(names(place.state.on(new PlaceEvent.LingerDue(1, place.now))))
        .containsExactly("GiveBack");
  }

  @Test
  void aShorterLinger_armsATimerOfItsOwn() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.release(a);
    Contender quick = place.join(8, LINGER / 10);

    PlaceStep.LingerTimer timer = (PlaceStep.LingerTimer) place.release(quick).get(0);
    assertThat(timer.delayNanos()).isEqualTo(LINGER / 10);
  }

  @Test
  void aTimerOfAPlaceGivenBack_isIgnored_byTheNextPlace() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    PlaceStep.LingerTimer timer = (PlaceStep.LingerTimer) place.release(a).get(0);
    place.state.on(new PlaceEvent.QueueChanged(1)); // given back
    assertThat(names(place.state.on(new PlaceEvent.Join(new Contender(8, LINGER, null)))))
        .containsExactly("Take");
    place.state.on(granted(2, true));

    place.now += LINGER;
    assertThat(place.state.on(new PlaceEvent.LingerDue(1, timer.due()))).isEmpty();
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.HELD);
  }

  @Test
  void aTimerDuringAGiveBack_changesNothing() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    PlaceStep.LingerTimer timer = (PlaceStep.LingerTimer) place.release(a).get(0);
    place.state.on(new PlaceEvent.QueueChanged(1));

    place.now += LINGER;
    assertThat(place.state.on(new PlaceEvent.LingerDue(1, timer.due()))).isEmpty();
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.NONE);
  }

  // ---- races between a give-back and a join: exactly one wins ----

  @Test
  void aJoinAfterTheGiveBack_takesANewPlace() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.release(a);
    place.state.on(new PlaceEvent.QueueChanged(1));

    Contender b = new Contender(8, LINGER, null);
    assertThat(names(place.state.on(new PlaceEvent.Join(b)))).containsExactly("Take");
    assertThat(place.state.heldBy(b)).isNull();
  }

  @Test
  void aChangeAfterTheJoin_waitsForTheRelease() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.release(a);
    Contender b = place.join(8);

    assertThat(place.state.on(new PlaceEvent.QueueChanged(1))).isEmpty();
    assertThat(place.state.heldBy(b)).isNotNull();
    assertThat(names(place.release(b))).containsExactly("Released", "GiveBack");
  }

  // ---- fencing across a linger ----

  @Test
  void aHoldAfterALinger_whoseTokenWasTaken_writesTheNodeForAFreshOne() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.release(a);
    Contender b = place.join(8);
    assertThat(b.token).as("the grant's token went to a").isZero();

    int write =
        ((PlaceStep.Write)
                place.state.on(new PlaceEvent.FenceAsked(b, new CompletableFuture<>())).get(0))
            .write();
    place.state.on(new PlaceEvent.FenceWritten(1, write, WRITE_ZXID, 1, false));
    assertThat(place.state.heldBy(b).token()).isEqualTo(WRITE_ZXID).isGreaterThan(GRANT_TOKEN);
  }

  @Test
  void aHoldAfterALingerThatFollowedChecks_waitsForTheWrite_thatFailsThem() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    assertThat(place.state.takeChecks(a).version()).isZero();
    place.release(a);
    Contender b = new Contender(8, LINGER, null);
    int write = ((PlaceStep.Write) place.state.on(new PlaceEvent.Join(b)).get(0)).write();
    assertThat(place.state.heldBy(b)).as("not before the write landed").isNull();

    assertThat(place.state.on(new PlaceEvent.FenceWritten(1, write, WRITE_ZXID, 1, false)))
        .containsExactly(new PlaceStep.Grant(b, WRITE_ZXID, false));
    assertThat(place.state.takeChecks(b).version()).isEqualTo(1);
  }

  @Test
  void aFailedWriteAfterALinger_givesThePlaceBack_andTheJoinerTakesANewOne() {
    Place place = new Place();
    Contender a = place.firstHold(8);
    place.state.takeChecks(a);
    place.release(a);
    Contender b = new Contender(8, LINGER, null);
    int write = ((PlaceStep.Write) place.state.on(new PlaceEvent.Join(b)).get(0)).write();

    assertThat(
            names(
                place.state.on(
                    new PlaceEvent.FenceFailed(1, write, false, new LockException("?", null)))))
        .containsExactly("GiveBack", "Take");
  }
}
