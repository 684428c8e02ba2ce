package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.internal.StateTables;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.curator.RetryPolicy;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The state owner's table, without a server: every phase meets every event, and the step and the
 * phase that follow are checked against {@link #TABLE}. Then the cases a table cell cannot show:
 * stale epochs, a grant racing a withdrawal, requeue and retry counting on an injected clock.
 */
@Timeout(10)
class AcquisitionStateTest {
  private static final long SESSION = 0x100;
  private static final String PATH = "/lock";
  private static final String OURS = PATH + "/_c_id-1-lock-0000000002";
  private static final String AHEAD = "_c_other-lock-0000000001";
  private static final String OURS_NAME = "_c_id-1-lock-0000000002";

  private static final long GRACE = TimeUnit.MILLISECONDS.toNanos(100);

  /** The zxid at which the node ahead of ours was deleted: after our create (czxid 17). */
  private static final long DELETED_AT = 23;

  private final AtomicLong clock = new AtomicLong();
  private RetryPolicy policy = new RetryNTimes(3, 100);

  /** Events, the columns of the table. */
  @SuppressWarnings("ImmutableEnumChecker") // the functions are stateless lambdas
  enum Event {
    CREATED(s -> s.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION))),
    CREATE_EXPIRED(
        s -> s.on(new StateEvent.CreateFailed(0, new KeeperException.SessionExpiredException()))),
    CREATE_LOST(
        s -> s.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException()))),
    CREATE_NONODE(
        s -> s.on(new StateEvent.CreateFailed(0, new KeeperException.NoNodeException(PATH)))),
    FOUND_OURS(
        s -> s.on(new StateEvent.OwnNodeSearched(0, List.of(OURS), true, SESSION, 17, SESSION))),
    READ_HOLDS(s -> s.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17))),
    READ_WAITS(
        s -> s.on(new StateEvent.QueueRead(0, List.of(List.of(AHEAD, OURS_NAME)), true, 17))),
    FIRST_READ_FAILED(s -> s.on(new StateEvent.FirstReadFailed(0))),
    PREDECESSOR_GONE(
        s -> s.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT))),
    OWN_NODE_CONFIRMED(
        s -> s.on(new StateEvent.OwnNodeRead(0, Step.Purpose.CONFIRM, false, SESSION, true))),
    OWN_NODE_GONE(s -> s.on(new StateEvent.OwnNodeChanged(0, true))),
    QUEUE_CHANGED(s -> s.on(new StateEvent.QueueChanged())),
    OWN_NODE_WATCH_DUE(s -> s.on(new StateEvent.OwnNodeWatchDue(0))),
    SUSPENDED(s -> s.on(new StateEvent.Suspended())),
    RECONNECTED_SAME(s -> s.on(new StateEvent.Reconnected(SESSION))),
    RECONNECTED_NEW(s -> s.on(new StateEvent.Reconnected(SESSION + 1))),
    SESSION_LOST(s -> s.on(new StateEvent.SessionLost())),
    CLOSED(s -> s.on(new StateEvent.Closed())),
    WITHDRAW(s -> s.on(new StateEvent.Withdraw())),
    RELEASE(s -> s.on(new StateEvent.Release())),
    EXPIRE(s -> s.on(new StateEvent.Expire("its time to live ran out", new AtomicBoolean())));

    final Function<AcquisitionState, Step> fire;

    Event(Function<AcquisitionState, Step> fire) {
      this.fire = fire;
    }
  }

  /**
   * Phase x event -> step / next phase. "-" is IGNORE with the phase unchanged, "!" a thrown
   * IllegalStateException, "Step/PHASE" a step of that type and the phase after it.
   */
  private static final String TABLE =
      """
      phase       CREATED            CREATE_EXPIRED    CREATE_LOST       CREATE_NONODE                   FOUND_OURS         READ_HOLDS  READ_WAITS     FIRST_READ_FAILED  PREDECESSOR_GONE  OWN_NODE_CONFIRMED  OWN_NODE_GONE  QUEUE_CHANGED              OWN_NODE_WATCH_DUE   SUSPENDED       RECONNECTED_SAME        RECONNECTED_NEW         SESSION_LOST      CLOSED       WITHDRAW       RELEASE           EXPIRE
      CREATING    ReadQueue/READING  Later/RECOVERING  Later/RECOVERING  CreateWithDirectories/CREATING  -                  -           -              -                  -                 -                   -              -                          -                    -               -                       -                       -                 End/FAILED   End/WITHDRAWN  !                 -
      RECOVERING  Tidy               -                 -                 -                               ReadQueue/READING  -           -              -                  -                 -                   -              -                          -                    -               FindOwnNode/RECOVERING  FindOwnNode/RECOVERING  -                 End/FAILED   End/WITHDRAWN  !                 -
      READING     Tidy               -                 -                 -                               -                  Grant/HELD  Watch/WAITING  ReadQueue/READING  -                 -                   -              -                          -                    -               -                       Requeue/CREATING        Requeue/CREATING  End/FAILED   End/WITHDRAWN  !                 -
      WAITING     Tidy               -                 -                 -                               -                  -           -              -                  Both/HELD         -                   -              -                          -                    -               -                       Requeue/CREATING        Requeue/CREATING  End/FAILED   End/WITHDRAWN  !                 -
      CONFIRMING  Tidy               -                 -                 -                               -                  -           -              -                  -                 Grant/HELD          -              -                          -                    -               -                       Requeue/CREATING        Requeue/CREATING  End/FAILED   End/WITHDRAWN  !                 -
      HELD        Tidy               -                 -                 -                               -                  -           -              -                  -                 -                   Notify/LOST    WatchOwnNodeLater/HELD     ReadOwnNode/HELD     Notify/AT_RISK  Verify/HELD             Notify/LOST             Notify/LOST       Notify/LOST  -              Release/RELEASED  Both/LOST
      AT_RISK     Tidy               -                 -                 -                               -                  -           -              -                  -                 -                   Notify/LOST    WatchOwnNodeLater/AT_RISK  ReadOwnNode/AT_RISK  -               Verify/AT_RISK          Notify/LOST             Notify/LOST       Notify/LOST  -              Release/RELEASED  Both/LOST
      LOST        Tidy               -                 -                 -                               -                  -           -              -                  -                 -                   -              -                          -                    -               -                       -                       -                 -            -              Release/RELEASED  -
      RELEASED    Tidy               -                 -                 -                               -                  -           -              -                  -                 -                   -              -                          -                    -               -                       -                       -                 -            -              -                 -
      WITHDRAWN   Tidy               Tidy              Tidy              Tidy                            -                  -           -              -                  -                 -                   -              -                          -                    -               -                       -                       -                 -            -              !                 -
      FAILED      Tidy               -                 -                 -                               -                  -           -              -                  -                 -                   -              -                          -                    -               -                       -                       -                 -            -              !                 -
      """;

  static Stream<Arguments> cells() {
    return StateTables.cells(TABLE, Phase.class, Event.class);
  }

  @Test
  void theTable_coversEveryPhaseAndEvent() {
    StateTables.assertComplete(TABLE, Phase.class, Event.class);
  }

  @ParameterizedTest(name = "{0} x {1} -> {2}")
  @MethodSource("cells")
  void phaseMeetsEvent(Phase phase, Event event, String expected) {
    AcquisitionState state = inPhase(phase);
    if (expected.equals("!")) {
      assertThatThrownBy(() -> event.fire.apply(state)).isInstanceOf(IllegalStateException.class);
      assertThat(state.view().phase()).isEqualTo(phase);
      return;
    }
    Step step = event.fire.apply(state);
    if (expected.equals("-")) {
      assertThat(step).isEqualTo(Step.IGNORE);
      assertThat(state.view().phase()).isEqualTo(phase);
      return;
    }
    String[] parts = expected.split("/", -1);
    assertThat(step.getClass().getSimpleName()).isEqualTo(parts[0]);
    assertThat(state.view().phase()).isEqualTo(parts.length > 1 ? Phase.valueOf(parts[1]) : phase);
  }

  // ---- beyond one cell ----

  @Test
  void anExpiryRacingARelease_exactlyOneWins() {
    AcquisitionState expiredFirst = inPhase(Phase.HELD);
    AtomicBoolean taken = new AtomicBoolean();
    Step expiry = expiredFirst.on(new StateEvent.Expire("its time to live ran out", taken));
    assertThat(taken).isTrue();
    assertThat(expiry)
        .isEqualTo(
            new Step.Both(
                new Step.Notify(
                    LockState.LOST, expiredFirst.view().token(), "its time to live ran out"),
                new Step.Discard(expiredFirst.view().nodes())));
    assertThat(expiredFirst.view().lostReason()).isEqualTo("its time to live ran out");
    Step release = expiredFirst.on(new StateEvent.Release());
    assertThat(release).isInstanceOf(Step.Release.class);
    assertThat(((Step.Release) release).lostReason()).isEqualTo("its time to live ran out");

    AcquisitionState releasedFirst = inPhase(Phase.HELD);
    assertThat(releasedFirst.on(new StateEvent.Release())).isInstanceOf(Step.Release.class);
    AtomicBoolean late = new AtomicBoolean();
    assertThat(releasedFirst.on(new StateEvent.Expire("its time to live ran out", late)))
        .isEqualTo(Step.IGNORE);
    assertThat(late).isFalse();
  }

  @Test
  void anAnswerOfAnEarlierEpoch_isIgnored_andAStaleCreateIsTidiedAway() {
    AcquisitionState state = inPhase(Phase.WAITING);
    Step requeue = state.on(new StateEvent.SessionLost());
    assertThat(requeue).isInstanceOf(Step.Requeue.class);
    int epoch = ((Step.Requeue) requeue).epoch();
    assertThat(epoch).isEqualTo(1);

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.OwnNodeRead(0, Step.Purpose.CONFIRM, false, SESSION, true)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION)))
        .isEqualTo(new Step.Tidy(Step.Cleanup.nodes(List.of(OURS)), false));
    assertThat(state.on(new StateEvent.RetryDue(0))).isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.RetryDue(epoch))).isEqualTo(new Step.Create(epoch, "id-2"));
  }

  @Test
  void grantRacingAWithdrawal_exactlyOneWins() {
    AcquisitionState granted = inPhase(Phase.READING);
    assertThat(granted.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isInstanceOf(Step.Grant.class);
    assertThat(granted.on(new StateEvent.Withdraw())).isEqualTo(Step.IGNORE);
    assertThat(granted.view().phase()).isEqualTo(Phase.HELD);

    AcquisitionState withdrawn = inPhase(Phase.READING);
    Step end = withdrawn.on(new StateEvent.Withdraw());
    assertThat(end).isEqualTo(new Step.End(null, Step.Cleanup.nodes(List.of(OURS))));
    assertThat(withdrawn.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(Step.IGNORE);
    assertThat(withdrawn.view().phase()).isEqualTo(Phase.WITHDRAWN);
  }

  @Test
  void withdrawWhileTheCreateIsOut_waitsForItsAnswer_thenDeletesWhatItMade() {
    AcquisitionState state = inPhase(Phase.CREATING);
    Step.End end = (Step.End) state.on(new StateEvent.Withdraw());
    assertThat(end.cleanup().awaitCreate()).isTrue();
    assertThat(end.cleanup().nodes()).isEmpty();

    assertThat(state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION)))
        .isEqualTo(new Step.Tidy(Step.Cleanup.nodes(List.of(OURS)), true));
  }

  @Test
  void withdrawWhileTheCreateIsOut_andItsAnswerIsLost_sweepsForTheProtectionId() {
    AcquisitionState state = inPhase(Phase.CREATING);
    state.on(new StateEvent.Withdraw());

    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException())))
        .isEqualTo(new Step.Tidy(Step.Cleanup.sweep("id-1"), true));
  }

  @Test
  void anAttemptEndingWhileACreatesOutcomeIsUnknown_sweepsForItsProtectionId() {
    AcquisitionState state = inPhase(Phase.RECOVERING);
    Step.End end = (Step.End) state.on(new StateEvent.Withdraw());
    assertThat(end.cleanup().sweepId()).isEqualTo("id-1");

    AcquisitionState givenUp = inPhase(Phase.RECOVERING);
    policy = new RetryNTimes(0, 0);
    Step.End failed =
        (Step.End)
            givenUp.on(
                new StateEvent.OwnNodeSearchFailed(
                    0, new KeeperException.ConnectionLossException()));
    assertThat(failed.failure()).isInstanceOf(LockException.class).hasMessageContaining(PATH);
    assertThat(failed.cleanup().sweepId()).isEqualTo("id-1");
  }

  @Test
  void aLostCreateAnswer_isRetriedAfterThePolicysDelay_bySearchingForOurNode() {
    AcquisitionState state = inPhase(Phase.CREATING);
    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException())))
        .isEqualTo(new Step.Later(0, 100));
    assertThat(state.on(new StateEvent.RetryDue(0))).isEqualTo(new Step.FindOwnNode(0, "id-1"));
    assertThat(state.on(new StateEvent.RetryDue(0)))
        .as("a delay is used once")
        .isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.OwnNodeSearched(0, List.of(), false, 0, 0, SESSION)))
        .as("never happened: create again under the same id")
        .isEqualTo(new Step.Create(0, "id-1"));
  }

  /**
   * Issue 32, defect 3: the client ended its session on its own while our create was out. The
   * server may have applied the create and keep the old session (and our node, ahead of everyone)
   * until its own timeout: the create is searched for like a lost answer, and the node found, owned
   * by the old session, is deleted before a fresh create under a new id.
   */
  @Test
  void aCreateAnsweredSessionExpired_isSearchedFor_andItsNodeOfTheOldSessionDeleted() {
    AcquisitionState state = inPhase(Phase.CREATING);
    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.SessionExpiredException())))
        .isEqualTo(new Step.Later(0, 100));
    assertThat(state.view().phase()).isEqualTo(Phase.RECOVERING);
    assertThat(state.on(new StateEvent.RetryDue(0))).isEqualTo(new Step.FindOwnNode(0, "id-1"));

    long newSession = SESSION + 1;
    assertThat(
            state.on(
                new StateEvent.OwnNodeSearched(0, List.of(OURS), true, SESSION, 17, newSession)))
        .isEqualTo(
            new Step.Both(
                new Step.Tidy(Step.Cleanup.nodes(List.of(OURS)), false),
                new Step.Create(0, "id-2")));
  }

  @Test
  void aCreateAnsweredSessionExpired_afterTheAttemptEnded_isSweptFor() {
    AcquisitionState state = inPhase(Phase.CREATING);
    state.on(new StateEvent.Withdraw());

    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.SessionExpiredException())))
        .isEqualTo(new Step.Tidy(Step.Cleanup.sweep("id-1"), true));

    AcquisitionState searching = inPhase(Phase.CREATING);
    searching.on(new StateEvent.CreateFailed(0, new KeeperException.SessionExpiredException()));
    Step.End end = (Step.End) searching.on(new StateEvent.Withdraw());
    assertThat(end.cleanup().sweepId()).as("closed while searching").isEqualTo("id-1");
  }

  /**
   * Issue 32, defect 2: whatever the policy's delay (its delays grow while ZooKeeper is away), an
   * attempt waiting it out goes on as soon as the client reconnects; the delay's timer then finds
   * nothing to do.
   */
  @Test
  void aRetryWaitingOutItsDelay_goesAtOnceWhenTheClientReconnects() {
    policy = new RetryNTimes(3, 60_000);
    AcquisitionState state = inPhase(Phase.CREATING);
    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException())))
        .isEqualTo(new Step.Later(0, 60_000));

    assertThat(state.on(new StateEvent.Reconnected(SESSION)))
        .isEqualTo(new Step.FindOwnNode(0, "id-1"));
    assertThat(state.on(new StateEvent.RetryDue(0))).isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.Reconnected(SESSION)))
        .as("nothing waits any more")
        .isEqualTo(Step.IGNORE);
  }

  /**
   * A create of ours that stands twice (its answer lost, searched for on a server that had not seen
   * it yet, then sent again) is deleted by the first read that shows it, whatever the verdict: here
   * it sorts ahead of us, so we watch it and hear it go.
   */
  @Test
  void aReadShowingAnotherNodeWithOurProtectionId_deletesIt() {
    String id = "0b4cf1de-6f3a-4a3e-9a9e-1d2c3b4a5f60";
    String ghost = "_c_" + id + "-lock-0000000001";
    String ours = "_c_" + id + "-lock-0000000002";
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(PATH + "/" + ours), 17, SESSION));

    Step step = state.on(new StateEvent.QueueRead(0, List.of(List.of(ghost, ours)), true, 17));

    assertThat(step).isInstanceOf(Step.Both.class);
    assertThat(((Step.Both) step).first())
        .isEqualTo(new Step.Tidy(Step.Cleanup.nodes(List.of(PATH + "/" + ghost)), false));
    assertThat(((Step.Both) step).second()).isInstanceOf(Step.Watch.class);
    assertThat(state.view().phase()).isEqualTo(Phase.WAITING);
  }

  @Test
  void aNodeOfAnotherSession_foundAfterALostAnswer_isDeletedAndANewIdUsed() {
    AcquisitionState state = inPhase(Phase.RECOVERING);
    Step step =
        state.on(new StateEvent.OwnNodeSearched(0, List.of(OURS), true, SESSION - 1, 17, SESSION));
    assertThat(step)
        .isEqualTo(
            new Step.Both(
                new Step.Tidy(Step.Cleanup.nodes(List.of(OURS)), false),
                new Step.Create(0, "id-2")));
  }

  @Test
  void aNodeFoundBeforeTheFirstConnect_isNotAdopted() {
    AcquisitionState state = inPhase(Phase.RECOVERING);
    assertThat(state.on(new StateEvent.OwnNodeSearched(0, List.of(OURS), true, 0, 17, 0)))
        .isInstanceOf(Step.Both.class);
    assertThat(state.view().phase()).isEqualTo(Phase.CREATING);
  }

  @Test
  void theOwnerIsTheSessionTheServerNames_soAReconnectOfThatSessionKeepsTheHold() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(
        new StateEvent.Created(
            0, List.of(OURS), 17, SESSION)); // sent before the first connect: owner from stat
    state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17));

    assertThat(state.on(new StateEvent.Reconnected(SESSION)))
        .isEqualTo(new Step.Verify(0, List.of(OURS), SESSION));
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
  }

  @Test
  void aGrantWhileDisconnected_isAtRiskAtOnce_andHeldOnceVerified() {
    AcquisitionState state = inPhase(Phase.READING);
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), false, 17)))
        .isEqualTo(new Step.Grant(17, true, false));
    assertThat(state.view().phase()).isEqualTo(Phase.AT_RISK);

    assertThat(state.on(new StateEvent.Verified(0, true, false)))
        .as("still disconnected")
        .isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.Verified(0, true, true)))
        .isEqualTo(new Step.Notify(LockState.HELD, 17, "reconnected, our node verified"));
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
  }

  @Test
  void aVerificationThatFindsOurNodeGone_losesTheHold() {
    AcquisitionState state = inPhase(Phase.AT_RISK);
    assertThat(state.on(new StateEvent.Verified(0, false, true))).isInstanceOf(Step.Notify.class);
    assertThat(state.view().phase()).isEqualTo(Phase.LOST);
    assertThat(state.view().owner()).isEqualTo(SESSION);
    assertThat(state.view().lostReason()).contains("after reconnecting");
  }

  @Test
  void requeues_areCountedAgainstTheRetryPolicy_untilItGivesUp() {
    policy = new RetryNTimes(2, 50);
    AcquisitionState state = inPhase(Phase.READING);
    for (int epoch = 1; epoch <= 2; epoch++) {
      Step step = state.on(new StateEvent.SessionLost());
      assertThat(step).isInstanceOf(Step.Requeue.class);
      assertThat(((Step.Requeue) step).delayMillis()).isEqualTo(50);
      state.on(new StateEvent.RetryDue(epoch));
      state.on(new StateEvent.Created(epoch, List.of(OURS), 17 + epoch, SESSION));
    }
    Step.End end = (Step.End) state.on(new StateEvent.SessionLost());
    assertThat(end.failure())
        .isInstanceOf(LockException.class)
        .hasMessageContaining("retry policy allows no further attempt");
    assertThat(end.cleanup().nodes()).containsExactly(OURS);
    assertThat(state.view().phase()).isEqualTo(Phase.FAILED);
  }

  @Test
  void retries_stopWhenThePolicysTimeIsUp_onTheInjectedClock() {
    policy = new RetryUntilElapsed(1_000, 100);
    AcquisitionState state = inPhase(Phase.CREATING);
    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.SessionMovedException())))
        .isEqualTo(new Step.Later(0, 100));
    state.on(new StateEvent.RetryDue(0));

    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_001));

    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.SessionMovedException())))
        .isInstanceOf(Step.End.class);
    assertThat(state.view().phase()).isEqualTo(Phase.FAILED);
  }

  @Test
  void aMissingDirectory_isCreatedWithTheNodeAFewTimesInARow_thenTheAttemptFails() {
    AcquisitionState state = inPhase(Phase.CREATING);
    for (int i = 0; i < Enqueuing.MAX_DIRECTORY_SENDS; i++) {
      assertThat(
              state.on(new StateEvent.CreateFailed(0, new KeeperException.NoNodeException(PATH))))
          .isEqualTo(new Step.CreateWithDirectories(0, "id-1"));
    }
    assertThat(state.on(new StateEvent.CreateFailed(0, new KeeperException.NoNodeException(PATH))))
        .isInstanceOf(Step.End.class);
  }

  @Test
  void aCreateWithDirectoriesWhoseAnswerIsLost_isSearchedFor_andSentAgainIfNotFound() {
    AcquisitionState state = inPhase(Phase.CREATING);
    state.on(new StateEvent.CreateFailed(0, new KeeperException.NoNodeException(PATH)));
    assertThat(
            state.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException())))
        .isInstanceOf(Step.Later.class);
    assertThat(state.view().phase()).isEqualTo(Phase.RECOVERING);
    assertThat(state.on(new StateEvent.RetryDue(0))).isEqualTo(new Step.FindOwnNode(0, "id-1"));

    // the directory is missing, so the multi that makes it with our node never happened
    assertThat(state.on(new StateEvent.OwnNodeSearched(0, List.of(), false, 0, 0, 0)))
        .isEqualTo(new Step.Create(0, "id-1"));
  }

  @Test
  void aRefusedDowngradeTie_failsWithOwnershipLost() {
    AcquisitionState state = inPhase(Phase.CREATING);
    Step.End end =
        (Step.End) state.on(new StateEvent.TieRefused(0, PATH + "/_c_w-__WRIT__0000000001"));
    assertThat(end.failure())
        .isInstanceOf(LockOwnershipLostException.class)
        .hasMessageContaining("__WRIT__0000000001");
    assertThat(state.view().phase()).isEqualTo(Phase.FAILED);
  }

  @Test
  void aRevocableLock_readsItsOwnNodeBeforeTheGrant_andHonoursAnEarlyRequest() {
    AcquisitionState state = newState(true);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(new Step.ReadOwnNode(0, OURS, Step.Purpose.CONFIRM, true));

    boolean revoke = true; // the node's data is Curator's revocation request
    assertThat(state.on(new StateEvent.OwnNodeRead(0, Step.Purpose.CONFIRM, revoke, SESSION, true)))
        .isEqualTo(new Step.Grant(17, false, true));
    assertThat(state.on(new StateEvent.OwnNodeRead(0, Step.Purpose.WATCH, revoke, SESSION, true)))
        .isInstanceOf(Step.Revoke.class);
    assertThat(state.on(new StateEvent.QueueChanged()))
        .as("already watched")
        .isEqualTo(Step.IGNORE);
  }

  @Test
  void whereAQueueIsExpected_theFirstReadLeavesNoChildWatch_andAGrantWatchesOurNodeAfterItsGrace() {
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, LockDriver.mutex(), null)),
                PATH,
                false,
                false,
                retries(),
                ids(),
                GRACE));
    state.start();
    assertThat(state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION)))
        .as("the read after the create's answer")
        .isEqualTo(new Step.ReadQueue(0, false));

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(
            new Step.Both(new Step.Grant(17, false, false), new Step.WatchOwnNodeLater(0, 100)));
    assertThat(state.view().alone())
        .as("alone, but nothing tells it of the next enqueue: not alone for a cohort")
        .isFalse();
  }

  @Test
  void whereAQueueIsExpected_theReadBehindTheCreateLeavesNoChildWatch() {
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, LockDriver.mutex(), null)),
                PATH,
                false,
                false,
                retries(),
                ids(),
                GRACE));
    state.start();
    assertThat(state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION, true, null, false)))
        .isEqualTo(Step.IGNORE);

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(
            new Step.Both(new Step.Grant(17, false, false), new Step.WatchOwnNodeLater(0, 100)));
  }

  @Test
  void aGrantByTheWatchingFirstRead_isAloneAndNeedsNoOwnNodeWatch() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION, true, null, false));

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(new Step.Grant(17, false, false));
    assertThat(state.view().alone()).isTrue();
  }

  @Test
  void aConfirmationThatFindsAnotherOwner_requeues() {
    AcquisitionState state = inPhase(Phase.CONFIRMING);
    assertThat(
            state.on(new StateEvent.OwnNodeRead(0, Step.Purpose.CONFIRM, false, SESSION + 1, true)))
        .isInstanceOf(Step.Requeue.class);
  }

  @Test
  void onlyTheFirstReadWatchesTheQueue_soAGrantByALaterReadWatchesOurNodeAfterItsGrace() {
    AcquisitionState state = inPhase(Phase.READING);
    String first = "_c_x-lock-0000000000";
    state.on(new StateEvent.QueueRead(0, List.of(List.of(first, AHEAD, OURS_NAME)), true, 17));
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .as("a later read: no child watch")
        .isEqualTo(new Step.ReadQueue(0, false));

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(
            new Step.Both(new Step.Grant(17, false, false), new Step.WatchOwnNodeLater(0, 100)));
    assertThat(state.on(new StateEvent.QueueChanged()))
        .as("its watch is already on its way")
        .isEqualTo(Step.IGNORE);
  }

  // ---- the hold's grace: when it watches its own node ----

  @Test
  void aHoldThatNothingWatches_watchesItsOwnNodeOnlyOnceItsGraceIsOver() {
    AcquisitionState state = grantedByALaterRead();
    assertThat(state.on(new StateEvent.OwnNodeWatchDue(0)))
        .isEqualTo(new Step.ReadOwnNode(0, OURS, Step.Purpose.WATCH, true));
    assertThat(state.on(new StateEvent.QueueChanged())).as("watched").isEqualTo(Step.IGNORE);
    assertThat(state.on(new StateEvent.OwnNodeWatchDue(0))).as("once").isEqualTo(Step.IGNORE);
  }

  @Test
  void aHoldReleasedWithinItsGrace_neverWatchesItsNode() {
    AcquisitionState state = grantedByALaterRead();
    assertThat(state.on(new StateEvent.Release())).isInstanceOf(Step.Release.class);
    assertThat(state.on(new StateEvent.OwnNodeWatchDue(0))).isEqualTo(Step.IGNORE);
  }

  @Test
  void aNodeDeletedWithinTheGrace_isFoundMissingByTheReadThatArmsTheWatch() {
    AcquisitionState state = grantedByALaterRead();
    state.on(new StateEvent.OwnNodeWatchDue(0));
    assertThat(
            state.on(
                new StateEvent.OwnNodeReadFailed(
                    0, Step.Purpose.WATCH, new KeeperException.NoNodeException(OURS))))
        .isEqualTo(new Step.Notify(LockState.LOST, 17, "our lock node was deleted"));
    assertThat(state.view().phase()).isEqualTo(Phase.LOST);
  }

  @Test
  void aQueueChangeHeardByAChildWatchedHold_waitsForTheRestOfTheGrace_onTheInjectedClock() {
    AcquisitionState within = inPhase(Phase.HELD); // granted by the watching first read at 0
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(40));
    assertThat(within.on(new StateEvent.QueueChanged()))
        .isEqualTo(new Step.WatchOwnNodeLater(0, 60));

    AcquisitionState after = inPhase(Phase.HELD);
    clock.addAndGet(GRACE);
    assertThat(after.on(new StateEvent.QueueChanged()))
        .as("the grace is over: at once")
        .isEqualTo(new Step.ReadOwnNode(0, OURS, Step.Purpose.WATCH, true));
  }

  @Test
  void aWaiterTakingOverFromTheHead_holdsWithoutARead_andWatchesItsNodeAfterTheGrace() {
    AcquisitionState state = inPhase(Phase.WAITING);
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .isEqualTo(
            new Step.Both(
                new Step.Grant(DELETED_AT, false, false), new Step.WatchOwnNodeLater(0, 100)));
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
    assertThat(state.on(new StateEvent.OwnNodeWatchDue(0)))
        .isEqualTo(new Step.ReadOwnNode(0, OURS, Step.Purpose.WATCH, true));
  }

  @Test
  void aTakeoverHeardWhileDisconnected_isAtRiskAtOnce() {
    AcquisitionState state = inPhase(Phase.WAITING);
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, false, DELETED_AT)))
        .isEqualTo(
            new Step.Both(
                new Step.Grant(DELETED_AT, true, false), new Step.WatchOwnNodeLater(0, 100)));
    assertThat(state.view().phase()).isEqualTo(Phase.AT_RISK);
  }

  @Test
  void aRevocableWaiterTakingOverFromTheHead_readsAndWatchesItsNodeFirst() {
    AcquisitionState state = newState(true);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    state.on(new StateEvent.QueueRead(0, List.of(List.of(AHEAD, OURS_NAME)), true, 17));
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .isEqualTo(new Step.ReadOwnNode(0, OURS, Step.Purpose.CONFIRM, true));
    assertThat(state.on(new StateEvent.OwnNodeRead(0, Step.Purpose.CONFIRM, true, SESSION, true)))
        .as("a revocation asked for while it waited")
        .isEqualTo(new Step.Grant(DELETED_AT, false, true));
  }

  @Test
  void aRevocableTakeoverWhoseNodeIsGone_requeues() {
    AcquisitionState state = inPhase(Phase.CONFIRMING);
    assertThat(
            state.on(
                new StateEvent.OwnNodeReadFailed(
                    0, Step.Purpose.CONFIRM, new KeeperException.NoNodeException(OURS))))
        .isInstanceOf(Step.Requeue.class);
  }

  @Test
  void withoutAGrace_aHoldThatNothingWatches_watchesItsNodeAtTheGrant() {
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, LockDriver.mutex(), null)),
                PATH,
                false,
                false,
                retries(),
                ids(),
                0));
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(
            new Step.Both(
                new Step.Grant(17, false, false),
                new Step.ReadOwnNode(0, OURS, Step.Purpose.WATCH, true)));
  }

  /** A hold granted by a read that left no child watch (its lock expected a queue). */
  private AcquisitionState grantedByALaterRead() {
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, LockDriver.mutex(), null)),
                PATH,
                false,
                false,
                retries(),
                ids(),
                GRACE));
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isEqualTo(
            new Step.Both(new Step.Grant(17, false, false), new Step.WatchOwnNodeLater(0, 100)));
    return state;
  }

  @Test
  void aCreateWithTheFirstReadBehindIt_waitsForThatRead_insteadOfSendingOne() {
    AcquisitionState state = newState(false);
    state.start();
    assertThat(state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION, true, null, false)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.view().phase()).isEqualTo(Phase.READING);
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17)))
        .isInstanceOf(Step.Grant.class);
  }

  @Test
  void aCreateRightBehindALocalNode_watchesIt_withoutReadingTheQueue() {
    String before = PATH + "/" + AHEAD;
    AcquisitionState behindAHold = newState(false);
    behindAHold.start();
    assertThat(
            behindAHold.on(
                new StateEvent.Created(0, List.of(OURS), 17, SESSION, false, before, true)))
        .isEqualTo(new Step.Watch(0, 1, before));
    assertThat(
            behindAHold.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .as("it held, so it was the head")
        .isEqualTo(
            new Step.Both(
                new Step.Grant(DELETED_AT, false, false), new Step.WatchOwnNodeLater(0, 100)));

    AcquisitionState behindAWaiter = newState(false);
    behindAWaiter.start();
    behindAWaiter.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION, false, before, false));
    assertThat(
            behindAWaiter.on(
                new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .isEqualTo(new Step.ReadQueue(0, false));
  }

  @Test
  void aGrantedLocalHoldAheadThatLeaves_makesUsTheHead_withoutAReadOfTheQueue() {
    AcquisitionState state = inPhase(Phase.READING);
    String first = "_c_x-lock-0000000000";
    assertThat(
            state.on(
                new StateEvent.QueueRead(0, List.of(List.of(first, AHEAD, OURS_NAME)), true, 17)))
        .isEqualTo(new Step.Watch(0, 1, PATH + "/" + AHEAD));

    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, true, true, DELETED_AT)))
        .isEqualTo(
            new Step.Both(
                new Step.Grant(DELETED_AT, false, false), new Step.WatchOwnNodeLater(0, 100)));
  }

  @Test
  void aWaiterDeeperInTheQueue_readsItAgain_whenItsPredecessorWasNotAHold() {
    AcquisitionState state = inPhase(Phase.READING);
    String first = "_c_x-lock-0000000000";
    state.on(new StateEvent.QueueRead(0, List.of(List.of(first, AHEAD, OURS_NAME)), true, 17));

    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT)))
        .isEqualTo(new Step.ReadQueue(0, false));
  }

  @Test
  void aReadWriteQueue_neverTakesOverWithoutAReadOfTheQueue() {
    String ours = "_c_id-1-__WRIT__0000000002";
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, ReadWriteDriver.WRITE, null)),
                PATH,
                false,
                true,
                retries(),
                ids(),
                GRACE));
    state.start();
    state.on(new StateEvent.Created(0, List.of(PATH + "/" + ours), 17, SESSION));
    state.on(
        new StateEvent.QueueRead(0, List.of(List.of("_c_w-__WRIT__0000000001", ours)), true, 17));

    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, true, true, DELETED_AT)))
        .isEqualTo(new Step.ReadQueue(0, false));
  }

  @Test
  void aPredecessorWatch_isKeptOnlyForTheGenerationAsked() {
    AcquisitionState state = inPhase(Phase.WAITING);
    Step.ArmedWatch watch = new FakeWatch();
    assertThat(state.watchArmed(0, 2, watch)).isFalse();
    assertThat(state.watchArmed(0, 1, watch)).isTrue();
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 2, false, false, true, DELETED_AT)))
        .isEqualTo(Step.IGNORE);

    Step.End end = (Step.End) state.on(new StateEvent.Withdraw());
    assertThat(end.cleanup().watch()).isSameAs(watch);
  }

  @Test
  void closingTheClient_whileWaiting_sendsNothingAndForgetsTheWatch() {
    AcquisitionState state = inPhase(Phase.WAITING);
    FakeWatch watch = new FakeWatch();
    state.watchArmed(0, 1, watch);

    Step.End end = (Step.End) state.on(new StateEvent.Closed());

    assertThat(end.failure()).isInstanceOf(LockException.class).hasMessageContaining("closed");
    assertThat(end.cleanup().clientClosed()).isTrue();
    assertThat(end.cleanup().watch()).isSameAs(watch);
    assertThat(end.cleanup().nodes()).isEmpty();
  }

  @Test
  void aMultiLockHolder_doesNotWatchItsNodeOnAQueueChange() {
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(
                    Slot.of("/a", LockDriver.mutex(), null),
                    Slot.of("/b", LockDriver.mutex(), null)),
                "[/a, /b]",
                false,
                false,
                retries(),
                ids(),
                GRACE));
    state.start();
    state.on(
        new StateEvent.Created(
            0, List.of("/a/_c_id-1-lock-0000000001", "/b/_c_id-1-lock-0000000001"), 5, SESSION));
    assertThat(
            state.on(
                new StateEvent.QueueRead(
                    0,
                    List.of(List.of("_c_id-1-lock-0000000001"), List.of("_c_id-1-lock-0000000001")),
                    true,
                    5)))
        .isInstanceOf(Step.Grant.class);
    assertThat(state.on(new StateEvent.QueueChanged())).isEqualTo(Step.IGNORE);
  }

  @Test
  void aDriverNamingANodeThatIsNotAnotherChild_failsTheAttempt() {
    LockDriver confused =
        new LockDriver() {
          @Override
          public String lockName() {
            return "lock-";
          }

          @Override
          public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
            return LockDecision.watch(ourNodeName);
          }
        };
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(PATH, confused, null)),
                PATH,
                false,
                true,
                retries(),
                ids(),
                GRACE));
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    Step.End end =
        (Step.End) state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17));
    assertThat(end.failure()).isInstanceOf(LockException.class).hasMessageContaining("driver");
  }

  // ---- getting to a phase ----

  /** A state in {@code phase}; CONFIRMING is a revocable lock's (only it confirms a takeover). */
  private AcquisitionState inPhase(Phase phase) {
    AcquisitionState state = newState(phase == Phase.CONFIRMING);
    Step first = state.start();
    assertThat(first).isEqualTo(new Step.Create(0, "id-1"));
    switch (phase) {
      case CREATING:
        break;
      case RECOVERING:
        state.on(new StateEvent.CreateFailed(0, new KeeperException.ConnectionLossException()));
        break;
      case WITHDRAWN:
        state.on(new StateEvent.Withdraw());
        break;
      case FAILED:
        state.on(new StateEvent.Closed());
        break;
      default:
        state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
        toHolding(state, phase);
    }
    assertThat(state.view().phase()).isEqualTo(phase);
    return state;
  }

  private static void toHolding(AcquisitionState state, Phase phase) {
    switch (phase) {
      case READING:
        return;
      case WAITING:
      case CONFIRMING:
        state.on(new StateEvent.QueueRead(0, List.of(List.of(AHEAD, OURS_NAME)), true, 17));
        if (phase == Phase.CONFIRMING) {
          state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, DELETED_AT));
        }
        return;
      default:
        state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 17));
        if (phase == Phase.AT_RISK) {
          state.on(new StateEvent.Suspended());
        } else if (phase == Phase.LOST) {
          state.on(new StateEvent.SessionLost());
        } else if (phase == Phase.RELEASED) {
          state.on(new StateEvent.Release());
        }
    }
  }

  private AcquisitionState newState(boolean revocable) {
    return new AcquisitionState(
        new AcquisitionMachine(
            List.of(Slot.of(PATH, LockDriver.mutex(), null)),
            PATH,
            revocable,
            true,
            retries(),
            ids(),
            GRACE));
  }

  private Retries retries() {
    return new Retries(() -> policy, clock::get);
  }

  /** Protection ids id-1, id-2, ... counted per state. */
  private static Supplier<String> ids() {
    AtomicInteger count = new AtomicInteger();
    return () -> "id-" + count.incrementAndGet();
  }

  private static final class FakeWatch implements Step.ArmedWatch {
    @Override
    public void withdraw() {}

    @Override
    public void forget() {}
  }

  // Issue 20: a grant takes its token from when it was decided, not from when its node was made.
  @Test
  void aGrantOnThePredecessorsDeletion_takesTheDeletionsZxidAsToken() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    state.on(new StateEvent.QueueRead(0, List.of(List.of(AHEAD, OURS_NAME)), true, 17));

    Step step = state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, 40));

    assertThat(((Step.Both) step).first()).isEqualTo(new Step.Grant(40, false, false));
    assertThat(state.view().token()).as("what fencingToken() returns").isEqualTo(40);
  }

  @Test
  void aGrantByARead_takesTheQueuesLastChangeAsToken() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));

    Step step = state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 31));

    assertThat(step).isEqualTo(new Step.Grant(31, false, false));
    assertThat(state.view().token()).isEqualTo(31);
  }

  @Test
  void aTokenIsNeverBelowTheNodesCzxid() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));

    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 0)))
        .as("a read that could not say when")
        .isEqualTo(new Step.Grant(17, false, false));
  }

  @Test
  void aDeletionWithoutItsZxid_isNotTakenOver_butReadsTheQueue() {
    AcquisitionState state = newState(false);
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    state.on(new StateEvent.QueueRead(0, List.of(List.of(AHEAD, OURS_NAME)), true, 17));

    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, true, false, true, 0)))
        .as("an old server's event, or a node gone before our watch was set")
        .isEqualTo(new Step.ReadQueue(0, false));
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(OURS_NAME)), true, 44)))
        .isInstanceOf(Step.Both.class);
    assertThat(state.view().token()).isEqualTo(44);
  }
}
