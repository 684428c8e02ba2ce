package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared read place's table, without a server: every situation of a process's read node meets
 * every event, and the steps and the place's phase that follow are checked against {@link #TABLE}
 * (the table of docs/design.md). Then what a cell cannot show: tokens, the bound over a run of
 * joins, zero budgets, a loss heard before the release.
 */
@Timeout(10)
class SharedReadRulesTest {
  private static final String NODE = "/lock/_c_p-__READ__0000000004";
  private static final long SESSION = 0x200;
  private static final long GRANT_TOKEN = 40;
  private static final long LINGER = 100;

  /**
   * A situation of the read place, with readers a, b, d holding and c waiting where it says.
   *
   * <ul>
   *   <li>NONE: no place, nobody waits.
   *   <li>TAKING: a waits; the place's attempt is under way.
   *   <li>OPEN: a (granted with the place) and b (joined) hold; nobody waits.
   *   <li>WRITER_WAITS: as OPEN, then a writer of this process waits and c waits.
   *   <li>CHECKING: bound 2; a holds, b and d joined (the second join sent the read); c waits.
   *   <li>WRITER_SEEN: as CHECKING, and the read found a write node; c waits, so the queue is read
   *       again, watching it (the writer may give up).
   *   <li>LINGERING: a (with a linger) was granted alone and let go: the node is kept.
   * </ul>
   */
  enum Row {
    NONE,
    TAKING,
    OPEN,
    WRITER_WAITS,
    CHECKING,
    WRITER_SEEN,
    LINGERING
  }

  /** The columns: events, each aimed at the row's natural subject. */
  enum Column {
    JOIN,
    WITHDRAW,
    RELEASE,
    RELEASE_LAST,
    PLACE_DECIDED,
    PLACE_GRANTED,
    PLACE_GRANTED_LOST,
    PLACE_ENDED,
    PLACE_AT_RISK,
    PLACE_LOST,
    QUEUE_CHANGED,
    CHECKED_NO_WRITER,
    CHECKED_WRITER,
    WRITER_COMES,
    WRITER_GOES,
    LINGER_DUE
  }

  /**
   * Row x column -> the steps' types joined by "+" and the place's phase after them; "-" for no
   * step (phase unchanged), "!" for an IllegalStateException. RELEASE lets b go while others hold;
   * RELEASE_LAST lets the others go first (not shown), then b. LINGER_DUE fires the timer armed
   * last once the linger has run out.
   */
  private static final String TABLE =
      """
      row           JOIN          WITHDRAW                  RELEASE             RELEASE_LAST                   PLACE_DECIDED   PLACE_GRANTED  PLACE_GRANTED_LOST    PLACE_ENDED  PLACE_AT_RISK              PLACE_LOST                                 QUEUE_CHANGED    CHECKED_NO_WRITER  CHECKED_WRITER   WRITER_COMES   WRITER_GOES  LINGER_DUE
      NONE          Take/TAKING   -                         !                   !                              -               -              -                     -            -                          -                                          -                -                  -                -              !            -
      TAKING        -             WithdrawPlace+Ended/NONE  !                   !                              Decided/TAKING  Grant/HELD     GiveBack+Take/TAKING  Ended/NONE   -                          -                                          -                -                  -                -              !            -
      OPEN          Grant/HELD    -                         Released/HELD       Released+GiveBack/NONE         -               -              -                     -            Notify+Notify/HELD         Notify+Notify+GiveBack/NONE                CheckQueue/HELD  -                  -                -              !            -
      WRITER_WAITS  Decided/HELD  Ended/HELD                Released/HELD       Released+GiveBack+Take/TAKING  -               -              -                     -            Notify+Notify/HELD         Notify+Notify+GiveBack+Take/TAKING         -                -                  -                -              Grant/HELD   -
      CHECKING      Decided/HELD  Ended/HELD                Released/HELD       Released+GiveBack+Take/TAKING  -               -              -                     -            Notify+Notify+Notify/HELD  Notify+Notify+Notify+GiveBack+Take/TAKING  -                Grant/HELD         CheckQueue/HELD  -              !            -
      WRITER_SEEN   Decided/HELD  Ended/HELD                Released/HELD       Released+GiveBack+Take/TAKING  -               -              -                     -            Notify+Notify+Notify/HELD  Notify+Notify+Notify+GiveBack+Take/TAKING  -                Grant/HELD         -                -              !            -
      LINGERING     Grant/HELD    -                         Complete/LINGERING  Complete/LINGERING             -               -              -                     -            GiveBack/NONE              GiveBack/NONE                              GiveBack/NONE    -                  -                GiveBack/NONE  !            GiveBack/NONE
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

  /** A read place in one of the rows' situations, and the events of the columns. */
  private static final class Fixture {
    long now = 1_000;
    final PlaceState state = PlaceState.sharedReads(() -> now);
    long due; // the linger timer armed last
    Contender a;
    Contender b;
    Contender d;
    Contender c; // waits, in the rows that say so; else never joined

    Fixture(Row row) {
      c = new Contender(8, null);
      switch (row) {
        case NONE -> {
          b = new Contender(8, null);
        }
        case TAKING -> {
          a = join(8);
          b = a;
          c = a;
        }
        case OPEN, WRITER_WAITS -> {
          a = join(8);
          granted();
          b = join(8);
          if (row == Row.WRITER_WAITS) {
            state.on(new PlaceEvent.LocalWriter(true, false));
            c = join(8);
          }
        }
        case LINGERING -> {
          a = new Contender(8, LINGER, null);
          state.on(new PlaceEvent.Join(a));
          state.on(grantedEvent(state.currentPlace(), false, true));
          due = timerOf(release(a));
          b = a;
        }
        case CHECKING, WRITER_SEEN -> {
          a = join(2);
          granted();
          b = join(2);
          d = join(2);
          c = join(2);
          if (row == Row.WRITER_SEEN) {
            state.on(new PlaceEvent.QueueChecked(state.currentPlace(), false, false));
          }
        }
      }
    }

    List<PlaceStep> fire(Column column) {
      int place = state.currentPlace();
      return switch (column) {
        case JOIN -> state.on(new PlaceEvent.Join(new Contender(8, null)));
        case WITHDRAW -> state.on(new PlaceEvent.Withdraw(c));
        case RELEASE -> release(b);
        case RELEASE_LAST -> {
          for (Contender other : new Contender[] {a, d}) {
            if (other != null && other != b && other.tenure != null) {
              release(other);
            }
          }
          yield release(b);
        }
        case PLACE_DECIDED -> state.on(new PlaceEvent.PlaceDecided(place));
        case PLACE_GRANTED -> state.on(grantedEvent(place, false));
        case PLACE_GRANTED_LOST -> state.on(grantedEvent(place, true));
        case PLACE_ENDED ->
            state.on(new PlaceEvent.PlaceEnded(place, new LockException("refused", null)));
        case PLACE_AT_RISK -> state.on(new PlaceEvent.PlaceChanged(place, LockState.AT_RISK));
        case PLACE_LOST -> state.on(new PlaceEvent.PlaceChanged(place, LockState.LOST));
        case QUEUE_CHANGED -> state.on(new PlaceEvent.QueueChanged(place));
        case CHECKED_NO_WRITER -> state.on(new PlaceEvent.QueueChecked(place, true, false));
        case CHECKED_WRITER -> state.on(new PlaceEvent.QueueChecked(place, false, false));
        case WRITER_COMES -> state.on(new PlaceEvent.LocalWriter(true, false));
        case WRITER_GOES -> state.on(new PlaceEvent.LocalWriter(false, false));
        case LINGER_DUE -> {
          now += LINGER;
          yield state.on(new PlaceEvent.LingerDue(place, due));
        }
      };
    }

    Contender join(int bound) {
      Contender member = new Contender(bound, null);
      state.on(new PlaceEvent.Join(member));
      return member;
    }

    void granted() {
      state.on(grantedEvent(state.currentPlace(), false));
    }

    Contender joinLingering() {
      Contender member = new Contender(8, LINGER, null);
      state.on(new PlaceEvent.Join(member));
      return member;
    }

    List<PlaceStep> release(Contender member) {
      return state.on(new PlaceEvent.Release(member, state.currentPlace(), false, null));
    }
  }

  private static PlaceEvent.PlaceGranted grantedEvent(int place, boolean lost) {
    return grantedEvent(place, lost, false);
  }

  private static PlaceEvent.PlaceGranted grantedEvent(int place, boolean lost, boolean alone) {
    return new PlaceEvent.PlaceGranted(place, NODE, SESSION, GRANT_TOKEN, false, alone, lost);
  }

  private static long timerOf(List<PlaceStep> steps) {
    return all(steps, PlaceStep.LingerTimer.class).stream()
        .mapToLong(PlaceStep.LingerTimer::due)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no timer in " + steps));
  }

  private static <T extends PlaceStep> List<T> all(List<PlaceStep> steps, Class<T> type) {
    return steps.stream().filter(type::isInstance).map(type::cast).toList();
  }

  // ---- what a cell cannot show ----

  @Test
  void readersGrantedWithThePlace_takeItsToken_andReadersWhoJoinLater_haveNoneHere() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.join(8);
    Contender b = place.join(8);
    List<PlaceStep.Grant> grants =
        all(place.state.on(grantedEvent(1, false)), PlaceStep.Grant.class);
    assertThat(grants).extracting(PlaceStep.Grant::token).containsExactly(GRANT_TOKEN, GRANT_TOKEN);
    Contender joiner = place.join(8);

    assertThat(place.state.heldBy(a))
        .isEqualTo(new PlaceState.Held(NODE, SESSION, GRANT_TOKEN, -1));
    assertThat(place.state.heldBy(b).token()).isEqualTo(GRANT_TOKEN);
    assertThat(place.state.heldBy(joiner).token())
        .as("a token handed out after the grant may be larger: the joiner's own node gives its")
        .isZero();
    assertThat(place.state.takeChecks(a)).as("checks are never the shared node's").isNull();
    assertThat(place.state.takeChecks(joiner)).isNull();
  }

  @Test
  void afterTheBoundOfJoins_theQueueIsRead_andAJoinerWaitsForTheAnswer() {
    Fixture place = new Fixture(Row.NONE);
    place.join(3);
    place.granted();
    place.join(3);
    place.join(3);
    Contender third = new Contender(3, null);
    List<PlaceStep> steps = place.state.on(new PlaceEvent.Join(third));
    assertThat(steps).hasSize(2);
    assertThat(steps.get(0)).isInstanceOf(PlaceStep.Grant.class);
    assertThat(steps.get(1)).isEqualTo(new PlaceStep.CheckQueue(1));

    Contender waiter = new Contender(3, null);
    assertThat(place.state.on(new PlaceEvent.Join(waiter)))
        .containsExactly(new PlaceStep.Decided(waiter));
    assertThat(place.state.phaseOf(waiter)).isEqualTo(Phase.WAITING);

    assertThat(
            all(place.state.on(new PlaceEvent.QueueChecked(1, true, false)), PlaceStep.Grant.class))
        .as("no writer found: a new run of joins")
        .hasSize(1);
    assertThat(place.state.phaseOf(waiter)).isEqualTo(Phase.HELD);
  }

  @Test
  void aWriterFound_drainsThePlace_andItsWaitersTakeTheNextOne_behindTheWriter() {
    Fixture place = new Fixture(Row.WRITER_SEEN);
    place.release(place.a);
    place.release(place.d);
    List<PlaceStep> steps = place.release(place.b);
    assertThat(steps.stream().map(step -> step.getClass().getSimpleName()))
        .containsExactly("Released", "GiveBack", "Take");
    assertThat(place.state.phaseOf(place.c)).isEqualTo(Phase.WAITING);

    List<PlaceStep> granted = place.state.on(grantedEvent(2, false));
    assertThat(all(granted, PlaceStep.Grant.class))
        .extracting(PlaceStep.Grant::member)
        .containsExactly(place.c);
    assertThat(place.state.on(new PlaceEvent.Join(new Contender(8, null))))
        .as("the new place is open again")
        .hasOnlyElementsOfType(PlaceStep.Grant.class);
  }

  @Test
  void aWriterFound_withReadersWaiting_readsTheQueueAgainWatchingIt_andOpensOnceTheWriterIsGone() {
    Fixture place = new Fixture(Row.CHECKING);

    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, false, false)))
        .as("c waits behind the writer: the queue is read again, watched")
        .containsExactly(new PlaceStep.CheckQueue(1, true));
    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, false, false)))
        .as("the writer is still there: the watch stays armed, no read until the queue changes")
        .isEmpty();
    assertThat(place.state.on(new PlaceEvent.Join(new Contender(8, null))))
        .as("a reader arriving meanwhile waits, and sends nothing")
        .hasOnlyElementsOfType(PlaceStep.Decided.class);
    assertThat(place.state.on(new PlaceEvent.QueueChanged(1)))
        .as("the queue changed: the writer may have left")
        .containsExactly(new PlaceStep.CheckQueue(1, true));
    List<PlaceStep> steps = place.state.on(new PlaceEvent.QueueChecked(1, true, false));

    assertThat(all(steps, PlaceStep.Grant.class)).hasSize(2);
    assertThat(place.state.phaseOf(place.c)).isEqualTo(Phase.HELD);
    assertThat(place.state.on(new PlaceEvent.Join(new Contender(8, null))))
        .as("open again to readers arriving")
        .hasOnlyElementsOfType(PlaceStep.Grant.class);
  }

  @Test
  void aWriterFound_withNobodyWaiting_sendsNoFurtherRead_untilAReaderArrives() {
    Fixture place = new Fixture(Row.NONE);
    place.join(2);
    place.granted();
    place.join(2);
    place.join(2); // the bound: the read goes out

    assertThat(place.state.on(new PlaceEvent.QueueChecked(1, false, false))).isEmpty();
    assertThat(place.state.on(new PlaceEvent.QueueChanged(1))).isEmpty();
    Contender arriving = new Contender(8, null);
    assertThat(place.state.on(new PlaceEvent.Join(arriving)))
        .containsExactly(new PlaceStep.Decided(arriving), new PlaceStep.CheckQueue(1, true));
  }

  @Test
  void readersArrivingWhileThePlaceIsAtRisk_wait_andJoinOnceItIsHeldAgain() {
    Fixture place = new Fixture(Row.OPEN);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));
    Contender arriving = new Contender(8, null);

    assertThat(place.state.on(new PlaceEvent.Join(arriving)))
        .as("a writer elsewhere may hold once our session ended: no grant in memory")
        .containsExactly(new PlaceStep.Decided(arriving));
    assertThat(place.state.phaseOf(arriving)).isEqualTo(Phase.WAITING);

    List<PlaceStep> steps = place.state.on(new PlaceEvent.PlaceChanged(1, LockState.HELD));
    assertThat(all(steps, PlaceStep.Grant.class))
        .extracting(PlaceStep.Grant::member)
        .containsExactly(arriving);
    assertThat(all(steps, PlaceStep.Grant.class).get(0).atRisk()).isFalse();
  }

  @Test
  void readersWaitingWhileThePlaceIsAtRisk_takeANewPlace_whenItIsLost() {
    Fixture place = new Fixture(Row.OPEN);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.AT_RISK));
    Contender arriving = place.join(8);

    List<PlaceStep> steps = place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST));

    assertThat(all(steps, PlaceStep.Take.class)).containsExactly(new PlaceStep.Take(2));
    assertThat(all(steps, PlaceStep.Grant.class)).isEmpty();
    assertThat(place.state.phaseOf(arriving)).isEqualTo(Phase.WAITING);
  }

  @Test
  void aReaderJoiningAPlaceKnownLost_beforeItsNotice_losesItsHolders_andWaitsForANewPlace() {
    Fixture place = new Fixture(Row.OPEN);
    Contender arriving = new Contender(8, null);

    List<PlaceStep> steps = place.state.on(new PlaceEvent.Join(arriving, 1, true));

    assertThat(all(steps, PlaceStep.Grant.class)).isEmpty();
    assertThat(all(steps, PlaceStep.Notify.class))
        .extracting(PlaceStep.Notify::state)
        .containsOnly(LockState.LOST);
    assertThat(all(steps, PlaceStep.Take.class)).containsExactly(new PlaceStep.Take(2));
    assertThat(place.state.phaseOf(place.a)).isEqualTo(Phase.LOST);
    assertThat(place.state.phaseOf(arriving)).isEqualTo(Phase.WAITING);
  }

  @Test
  void aReaderJoiningAKeptNodeKnownLost_isNotGrantedOnIt() {
    Fixture place = new Fixture(Row.LINGERING);
    Contender arriving = new Contender(8, null);

    List<PlaceStep> steps = place.state.on(new PlaceEvent.Join(arriving, 1, true));

    assertThat(all(steps, PlaceStep.Grant.class)).isEmpty();
    assertThat(steps.stream().map(step -> step.getClass().getSimpleName()))
        .containsExactly("GiveBack", "Take");
  }

  @Test
  void aJoinNamingAnOlderPlace_changesNothingForTheCurrentOne() {
    Fixture place = new Fixture(Row.OPEN);
    Contender arriving = new Contender(8, null);

    assertThat(place.state.on(new PlaceEvent.Join(arriving, 0, true)))
        .hasOnlyElementsOfType(PlaceStep.Grant.class);
  }

  @Test
  void theLastReaderOfAPlaceKnownLost_doesNotKeepItsNode() {
    Fixture place = new Fixture(Row.NONE);
    Contender a = place.joinLingering();
    place.state.on(grantedEvent(1, false, true));

    List<PlaceStep> steps =
        place.state.on(new PlaceEvent.Release(a, place.state.currentPlace(), true, null));

    assertThat(all(steps, PlaceStep.LingerTimer.class)).isEmpty();
    assertThat(all(steps, PlaceStep.GiveBack.class)).hasSize(1);
  }

  @Test
  void aLocalWriterThatGivesUp_opensThePlaceAgain_toTheReadersThatWaited() {
    Fixture place = new Fixture(Row.WRITER_WAITS);
    Contender second = place.join(8);
    List<PlaceStep> steps = place.state.on(new PlaceEvent.LocalWriter(false, false));
    assertThat(all(steps, PlaceStep.Grant.class))
        .extracting(PlaceStep.Grant::member)
        .containsExactly(place.c, second);
  }

  @Test
  void aReaderWhoseLossWasHeard_releasesWithoutTouchingTheNextPlace() {
    Fixture place = new Fixture(Row.WRITER_WAITS);
    place.state.on(new PlaceEvent.PlaceChanged(1, LockState.LOST));
    assertThat(place.state.phaseOf(place.a)).isEqualTo(Phase.LOST);
    assertThat(place.state.phaseOf(place.c)).as("waits for the new place").isEqualTo(Phase.WAITING);

    List<PlaceStep> released = place.release(place.a);
    assertThat(released).hasSize(1);
    PlaceStep.Released step = (PlaceStep.Released) released.get(0);
    assertThat(step.lostReason()).isNotNull();
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.TAKING);
    assertThat(place.release(place.a).get(0))
        .as("a second release completes and says nothing")
        .isInstanceOf(PlaceStep.Complete.class);
  }

  @Test
  void anUnusedPlace_asksOnceToBeDropped_whenItsLastReaderLetsGo() {
    Fixture place = new Fixture(Row.OPEN);
    assertThat(place.state.on(new PlaceEvent.Unused())).isEmpty();
    place.release(place.a);
    List<PlaceStep> steps = place.release(place.b);
    assertThat(all(steps, PlaceStep.Retire.class)).hasSize(1);
    assertThat(place.state.isRetirable()).isTrue();
    assertThat(place.state.on(new PlaceEvent.Used())).isEmpty();
    assertThat(place.state.isRetirable()).isFalse();
  }

  // ---- keeping the node with no reader (linger) ----

  @Test
  void aKeptNode_isJoinedAtOnce_andATimerThatFiresEarly_isArmedAgainForWhatIsLeft() {
    Fixture place = new Fixture(Row.LINGERING);
    Contender next = place.joinLingering();
    assertThat(place.state.phaseOf(next)).isEqualTo(Phase.HELD);
    assertThat(place.state.heldBy(next).token()).as("a join: its token is its own node's").isZero();
    place.now += 40;
    assertThat(all(place.release(next), PlaceStep.LingerTimer.class))
        .as("the timer out comes before the new deadline: none armed")
        .isEmpty();
    place.now = place.due; // the first timer fires; the linger has 40 ns left
    List<PlaceStep> early = place.state.on(new PlaceEvent.LingerDue(1, place.due));
    assertThat(all(early, PlaceStep.LingerTimer.class))
        .singleElement()
        .satisfies(timer -> assertThat(timer.delayNanos()).isEqualTo(40));
    assertThat(place.state.placePhase()).isEqualTo(PlaceState.Phase.LINGERING);
  }

  @Test
  void aNodeGrantedNotAlone_orAfterAWriterWasSeen_isNotKept() {
    Fixture behind = new Fixture(Row.NONE);
    Contender a = behind.joinLingering();
    behind.granted(); // not alone: no child watch tells of the next participant
    assertThat(behind.release(a).stream().map(step -> step.getClass().getSimpleName()))
        .containsExactly("Released", "GiveBack");

    Fixture seen = new Fixture(Row.NONE);
    Contender b = seen.joinLingering();
    seen.state.on(grantedEvent(1, false, true));
    Contender c = seen.joinLingering();
    seen.state.on(new PlaceEvent.QueueChanged(1));
    seen.state.on(new PlaceEvent.QueueChecked(1, false, false)); // a writer
    seen.release(b);
    assertThat(seen.release(c).stream().map(step -> step.getClass().getSimpleName()))
        .containsExactly("Released", "GiveBack");
  }

  @Test
  void aLocalWriterGrantedWhileThePlaceHolds_meansItsNodeIsGone_soItsReadersAreLost_notJoined() {
    Fixture place = new Fixture(Row.WRITER_WAITS);
    List<PlaceStep> steps = place.state.on(new PlaceEvent.LocalWriter(false, true));
    assertThat(steps.stream().map(step -> step.getClass().getSimpleName()))
        .as("both holders lose; the waiter takes a new place, behind the writer")
        .containsExactly("Notify", "Notify", "GiveBack", "Take");
    assertThat(place.state.phaseOf(place.a)).isEqualTo(Phase.LOST);
    assertThat(place.state.phaseOf(place.c)).isEqualTo(Phase.WAITING);
  }
}
