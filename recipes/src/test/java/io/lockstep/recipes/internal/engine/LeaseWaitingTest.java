package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.queue.LeaseDriver;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Retries;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lease's waiting verdict without a server: "wait for a change of the directory's children", a
 * child watch whose arming read is judged, re-armed by one read at each change, withdrawn with the
 * attempt.
 */
@Timeout(10)
class LeaseWaitingTest {
  private static final long SESSION = 0x100;
  private static final String DIR = "/sem/leases";
  private static final String OURS_NAME = "_c_id-1-lease-0000000003";
  private static final String OURS = DIR + "/" + OURS_NAME;
  private static final String A = "_c_a-lease-0000000001";
  private static final String B = "_c_b-lease-0000000002";
  private static final long GRACE = TimeUnit.MILLISECONDS.toNanos(100);

  private final AtomicLong clock = new AtomicLong();

  private AcquisitionState newState(int max) {
    AtomicInteger ids = new AtomicInteger();
    AcquisitionState state =
        new AcquisitionState(
            new AcquisitionMachine(
                List.of(Slot.of(DIR, new LeaseDriver(max), null)),
                "/sem",
                false,
                false,
                new Retries(() -> new RetryNTimes(3, 100), clock::get),
                () -> "id-" + ids.incrementAndGet(),
                GRACE));
    state.start();
    state.on(new StateEvent.Created(0, List.of(OURS), 17, SESSION));
    return state;
  }

  /** A lease with max 2 behind A and B: waiting on the directory's child watch, generation 1. */
  private AcquisitionState waiting() {
    AcquisitionState state = newState(2);
    assertThat(state.on(new StateEvent.QueueRead(0, List.of(List.of(A, B, OURS_NAME)), true, 17)))
        .isEqualTo(new Step.Watch(0, 1, DIR, true));
    assertThat(state.view().phase()).isEqualTo(Phase.WAITING);
    return state;
  }

  @Test
  void aReadWithFewerThanMaxAhead_grants_withTheReadsZxidAsToken() {
    AcquisitionState state = newState(2);
    Step step = state.on(new StateEvent.QueueRead(0, List.of(List.of(B, OURS_NAME)), true, 21));
    assertThat(step).isInstanceOf(Step.Both.class);
    assertThat(((Step.Both) step).first()).isEqualTo(new Step.Grant(21, false, false));
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
  }

  @Test
  void maxAhead_asksForAChildWatchOnTheDirectory() {
    waiting();
  }

  @Test
  void theArmingReadStillFull_keepsWaiting_withoutAnotherRequest() {
    AcquisitionState state = waiting();
    assertThat(
            state.on(
                new StateEvent.QueueWatched(0, 1, List.of(List.of(A, B, OURS_NAME)), true, 18)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.view().phase()).isEqualTo(Phase.WAITING);
  }

  @Test
  void aChangeBetweenTheReadAndTheArmingRead_isNotMissed_theArmingReadGrants() {
    AcquisitionState state = waiting();
    Step step =
        state.on(new StateEvent.QueueWatched(0, 1, List.of(List.of(B, OURS_NAME)), true, 25));
    assertThat(((Step.Both) step).first()).isEqualTo(new Step.Grant(25, false, false));
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
  }

  @Test
  void theWatchFiring_armsTheNextWatchWithOneRead_andItsAnswerDecides() {
    AcquisitionState state = waiting();
    state.on(new StateEvent.QueueWatched(0, 1, List.of(List.of(A, B, OURS_NAME)), true, 18));
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, false, false, true, 0)))
        .isEqualTo(new Step.Watch(0, 2, DIR, true));
    assertThat(state.view().phase()).isEqualTo(Phase.WAITING);
    // the old generation's answer or event is stale now
    assertThat(state.on(new StateEvent.QueueWatched(0, 1, List.of(List.of(OURS_NAME)), true, 30)))
        .isEqualTo(Step.IGNORE);
    Step step =
        state.on(new StateEvent.QueueWatched(0, 2, List.of(List.of(A, OURS_NAME)), true, 31));
    assertThat(((Step.Both) step).first()).isEqualTo(new Step.Grant(31, false, false));
  }

  @Test
  void withdrawingAWaitingLease_deletesItsNode_andWithdrawsTheArmedChildWatch() {
    AcquisitionState state = waiting();
    FakeWatch watch = new FakeWatch();
    assertThat(state.watchArmed(0, 1, watch)).isTrue();
    Step step = state.on(new StateEvent.Withdraw());
    assertThat(step).isInstanceOf(Step.End.class);
    Step.Cleanup cleanup = ((Step.End) step).cleanup();
    assertThat(cleanup.nodes()).containsExactly(OURS);
    assertThat(cleanup.watch()).isSameAs(watch);
    assertThat(state.view().phase()).isEqualTo(Phase.WITHDRAWN);
  }

  @Test
  void ourNodeMissingFromTheArmingRead_requeues_andHandsTheWatchToTheCleanup() {
    AcquisitionState state = waiting();
    FakeWatch watch = new FakeWatch();
    state.watchArmed(0, 1, watch);
    Step step = state.on(new StateEvent.QueueWatched(0, 1, List.of(List.of(A, B)), true, 18));
    assertThat(step).isInstanceOf(Step.Requeue.class);
    assertThat(((Step.Requeue) step).cleanup().watch()).isSameAs(watch);
    assertThat(state.view().phase()).isEqualTo(Phase.CREATING);
  }

  @Test
  void aFiringAfterTheGrant_isIgnored() {
    AcquisitionState state = waiting();
    state.on(new StateEvent.QueueWatched(0, 1, List.of(List.of(B, OURS_NAME)), true, 25));
    assertThat(state.on(new StateEvent.PredecessorChanged(0, 1, false, false, true, 0)))
        .isEqualTo(Step.IGNORE);
    assertThat(state.view().phase()).isEqualTo(Phase.HELD);
  }

  private static final class FakeWatch implements Step.ArmedWatch {
    @Override
    public void withdraw() {}

    @Override
    public void forget() {}
  }
}
