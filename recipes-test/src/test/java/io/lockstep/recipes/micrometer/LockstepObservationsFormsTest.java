package io.lockstep.recipes.micrometer;

import static io.lockstep.recipes.micrometer.ObservationLedger.high;
import static io.lockstep.recipes.micrometer.ObservationLedger.low;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.recipes.locks.LockView;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testkit.internal.Sessions;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The promises of docs/tracing.md for every form of acquiring, against a real server: the wait and
 * the hold are under the observation current in the thread that called (also when the grant comes
 * on another thread, or from a local holder's release), each attempt that does not end granted ends
 * its wait with its outcome, and every observation started is stopped exactly once.
 */
@Timeout(90)
class LockstepObservationsFormsTest extends ObservedFormsBase {
  private ReentrantMutex mutex(String name) {
    return new ReentrantMutex(client, zk.path(name));
  }

  private ReentrantMutex handingOff(String name) {
    return ReentrantMutex.builder(client, zk.path(name)).localHandoff().build();
  }

  @Test
  void theTimedAndHandleForms_areUnderTheCallersObservation() throws Exception {
    ReentrantMutex lock = mutex("forms");

    Observation request =
        underRequest(
            () -> {
              assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
              lock.release();
              assertThat(lock.acquire(Duration.ofSeconds(10))).isTrue();
              lock.release();
              lock.hold().close();
              lock.tryHold(Duration.ofSeconds(10)).orElseThrow().close();
            });

    ledger.assertAllUnder(request, 4, 4);
  }

  @Test
  void theLockView_isUnderTheCallersObservation() throws Exception {
    LockView view = mutex("view").asLock();

    Observation request =
        underRequest(
            () -> {
              view.lock();
              view.unlock();
              view.lockInterruptibly();
              view.unlock();
              assertThat(view.tryLock()).isTrue();
              view.unlock();
              assertThat(view.tryLock(10, TimeUnit.SECONDS)).isTrue();
              view.unlock();
            });

    ledger.assertAllUnder(request, 4, 4);
  }

  @Test
  void anAsynchronousAcquire_grantedFromAnotherObservationsRelease_staysUnderItsCaller()
      throws Exception {
    ReentrantMutex waiter = mutex("async");
    grantedFromAnotherObservationsRelease(mutex("async"), 2, () -> asynchronously(waiter));
  }

  /** As above, with the grant a local handoff: no node of its own, no server round trip. */
  @Test
  void anAsynchronousLocalHandoff_staysUnderItsCaller() throws Exception {
    ReentrantMutex waiter = handingOff("local");
    grantedFromAnotherObservationsRelease(handingOff("local"), 1, () -> asynchronously(waiter));
  }

  @Test
  void aBlockingLocalHandoff_isUnderTheWaitingThreadsObservation() throws Exception {
    ReentrantMutex waiter = handingOff("local");
    grantedFromAnotherObservationsRelease(
        handingOff("local"),
        1,
        () -> CompletableFuture.runAsync(() -> inRequest(() -> locked(waiter.asLock())).unlock()));
  }

  private static LockView locked(LockView view) {
    view.lock();
    return view;
  }

  private CompletableFuture<?> asynchronously(ReentrantMutex waiter) {
    return inRequest(() -> waiter.acquireAsync().toCompletableFuture().thenAccept(LockHold::close));
  }

  /**
   * The waiter acquires under "request" ({@code waiting} starts it); it is granted on Lockstep's
   * threads at the holder's release, which runs with another observation, "holding", in scope. The
   * waiter's wait and hold are under "request", the holder's under "holding".
   */
  private void grantedFromAnotherObservationsRelease(
      ReentrantMutex holder, int nodesWhileWaiting, Supplier<CompletableFuture<?>> waiting)
      throws Exception {
    Observation holding = Observation.start("holding", registry);
    CompletableFuture<?> waited;
    try (Observation.Scope scope = holding.openScope()) {
      holder.acquire();
      waited = waiting.get();
      await().until(() -> ledger.waits().size() == 2);
      assertThat(holder.getParticipantNodes()).hasSize(nodesWhileWaiting);
      holder.release();
    } finally {
      holding.stop();
    }
    waited.get(10, TimeUnit.SECONDS);

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE))
        .containsExactly("holding", "request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).containsExactly("holding", "request");
  }

  /** The atomic multi-lock: one wait and one hold per attempt, for all its paths. */
  @Test
  void anAtomicMultiMutex_isOneWaitAndOneHoldPerAttempt_underTheCallersObservation()
      throws Exception {
    MultiMutex lock = new MultiMutex(client, List.of(zk.path("a"), zk.path("b")));

    Observation request = underRequest(() -> acquireAndHold(lock));

    ledger.assertAllUnder(request, 2, 2);
    assertThat(ledger.waits())
        .allSatisfy(
            wait -> {
              assertThat(low(wait, "recipe")).isEqualTo("MultiMutex");
              assertThat(high(wait, "path")).contains(zk.path("a")).contains(zk.path("b"));
            });
  }

  /** A multi-lock composed of lock objects: their observations, each under the caller's. */
  @Test
  void aComposedMultiMutex_isItsLocksObservations_underTheCallersObservation() throws Exception {
    MultiMutex lock = new MultiMutex(List.of(mutex("c1"), mutex("c2")));

    Observation request = underRequest(() -> acquireAndHold(lock));

    ledger.assertAllUnder(request, 4, 4);
  }

  /** Acquires and releases {@code lock}, then takes a hold of it and closes it. */
  private static void acquireAndHold(FencedLock lock) throws InterruptedException {
    lock.acquire();
    lock.release();
    lock.hold().close();
  }

  /** Its asynchronous acquire starts the second lock when the first is granted, elsewhere. */
  @Test
  void aComposedMultiMutex_acquiredAsynchronously_isUnderTheCallersObservation() throws Exception {
    MultiMutex lock = new MultiMutex(List.of(mutex("c1"), mutex("c2")));

    CompletableFuture<LockHold> pending =
        inRequest(() -> lock.acquireAsync().toCompletableFuture());
    pending.get(10, TimeUnit.SECONDS).close();

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE))
        .containsExactly("request", "request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).containsExactly("request", "request");
  }

  @Test
  void theSpringLockRegistry_isUnderTheCallersObservation() throws Exception {
    LockstepLockRegistry locks = new LockstepLockRegistry(client, zk.path("registry"));

    Observation request =
        underRequest(
            () -> {
              LockstepLock lock = locks.obtain("order-17");
              lock.lock();
              lock.unlock();
              locks.executeLocked("order-17", () -> {});
              LockstepLock both = locks.obtainAll(List.of("order-17", "order-4"));
              both.lock();
              both.unlock();
            });

    ledger.assertAllUnder(request, 3, 3);
  }

  // How attempts that are not granted end: each wait stopped once, with its outcome, no hold.

  /** Something done with the observed client's lock while another client holds it. */
  interface Busy {
    void run(ReentrantMutex lock, ReentrantMutex holder) throws Exception;
  }

  /**
   * Runs {@code call} while an unobserved client holds the lock; then each wait stopped with the
   * {@code outcomes}, in order, and no hold began.
   */
  private void whileHeldElsewhere(Busy call, String... outcomes) throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("busy"));
    holder.acquire();
    try {
      call.run(mutex("busy"), holder);
    } finally {
      holder.release();
    }
    assertThat(ledger.outcomesOnceStopped(outcomes.length)).containsExactly(outcomes);
    assertThat(ledger.holds()).isEmpty();
  }

  /** {@code lock}'s asynchronous acquire, once queued behind {@code holder}. */
  private static CompletableFuture<LockHold> queuedBehind(
      ReentrantMutex holder, ReentrantMutex lock) {
    CompletableFuture<LockHold> pending = lock.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == 2);
    return pending;
  }

  @Test
  void aCancelledAsynchronousAttempt_endsWithdrawn() throws Exception {
    whileHeldElsewhere(
        (lock, holder) -> {
          CompletableFuture<LockHold> pending = queuedBehind(holder, lock);
          assertThat(pending.cancel(true)).isTrue();
          await().until(() -> holder.getParticipantNodes().size() == 1);
        },
        "WITHDRAWN");
  }

  @Test
  void anInterruptedAttempt_endsWithdrawn() throws Exception {
    whileHeldElsewhere(
        (lock, holder) -> {
          FutureTask<Void> acquiring =
              new FutureTask<>(
                  () -> {
                    lock.acquire();
                    lock.release();
                    return null;
                  });
          Thread waiter = new Thread(acquiring);
          waiter.start();
          await().until(() -> holder.getParticipantNodes().size() == 2);
          waiter.interrupt();
          assertThatThrownBy(() -> acquiring.get(10, TimeUnit.SECONDS))
              .hasCauseInstanceOf(InterruptedException.class);
        },
        "WITHDRAWN");
  }

  @Test
  void everyTimedForm_thatRunsOut_endsTimedOut() throws Exception {
    Duration budget = Duration.ofMillis(100);
    whileHeldElsewhere(
        (lock, holder) -> {
          assertThat(lock.acquire(budget)).isFalse();
          assertThat(lock.tryHold(budget)).isEmpty();
          assertThat(lock.asLock().tryLock()).isFalse();
          assertThatThrownBy(() -> lock.acquireAsync(budget).toCompletableFuture().get())
              .isInstanceOf(ExecutionException.class)
              .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        },
        "TIMED_OUT",
        "TIMED_OUT",
        "TIMED_OUT",
        "TIMED_OUT");
  }

  @Test
  void anAttemptWhoseClientCloses_endsFailed() throws Exception {
    whileHeldElsewhere(
        (lock, holder) -> {
          CompletableFuture<LockHold> pending = queuedBehind(holder, lock);
          client.close();
          assertThatThrownBy(() -> pending.get(10, TimeUnit.SECONDS))
              .isInstanceOf(ExecutionException.class);
        },
        "FAILED");
  }

  @Test
  void anAttemptWithZooKeeperUnreachable_endsUnreachable() throws Exception {
    CuratorFramework cutOff = zk.newClient(b -> b.connectString(zk.proxy().connectString()));
    var unused = LockstepObservations.bind(cutOff, registry); // its client closed after the test
    ReentrantMutex lock = new ReentrantMutex(cutOff, zk.path("a"));
    zk.proxy().cut();
    await().until(() -> !cutOff.getZookeeperClient().isConnected());

    assertThatThrownBy(() -> lock.acquire(300, TimeUnit.MILLISECONDS))
        .isInstanceOf(LockUnreachableException.class);
    assertThatThrownBy(() -> lock.acquireAsync(Duration.ofMillis(300)).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LockUnreachableException.class);

    assertThat(ledger.outcomesOnceStopped(2)).containsExactly("UNREACHABLE", "UNREACHABLE");
    assertThat(ledger.holds()).isEmpty();
  }

  /**
   * A local handoff's hold takes its token after its grant (the place's was taken by the holder
   * before it); lost before its release, its observation stops at the loss, with that token.
   */
  @Test
  void aLocalHandoffHold_lostAfterTakingItsToken_stopsWithIt() throws Exception {
    ReentrantMutex first = handingOff("lost");
    ReentrantMutex second = handingOff("lost");
    LockHold holder = first.hold();
    long placeToken = holder.fencingToken(); // taken: the next local hold writes for its own
    CompletableFuture<LockHold> pending = second.acquireAsync().toCompletableFuture();
    await().until(() -> ledger.waits().size() == 2);
    holder.close();
    LockHold handedOn = pending.get(10, TimeUnit.SECONDS);
    long token = handedOn.fencingToken();
    assertThat(token).isGreaterThan(placeToken);

    Sessions.expire(client, zk.server().getConnectString());
    await().until(() -> handedOn.state() == LockState.LOST);
    await().until(() -> ledger.holds().size() == 2 && ledger.isStopped(ledger.holds().get(1)));
    handedOn.close();

    Observation.Context hold = ledger.holds().get(1);
    assertThat(low(hold, "state")).isEqualTo("LOST");
    assertThat(high(hold, "token")).as("the token it took").isEqualTo(Long.toString(token));
  }
}
