package io.lockstep.recipes.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

/**
 * {@link ReactiveLocks} against each way a hold ends, in each phase of {@code withLock}: the hold
 * LOST (session expired, client closed, node deleted), the subscriber cancelling, the body ending
 * as the loss is told. Each ends with an honest outcome and leaves no node (the extension checks
 * after each test that no node and no watch is left).
 */
@Timeout(60)
class ReactiveLocksLossTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String HOOK = "ReactiveLocksLossTest";

  @AfterEach
  void resetReactorHooks() {
    Schedulers.resetOnScheduleHook(HOOK);
  }

  /** How a hold is lost. */
  enum Loss {
    SESSION_EXPIRED,
    CLIENT_CLOSED,
    NODE_DELETED;

    void inflict(CuratorFramework client, FencedLock lock) throws Exception {
      switch (this) {
        case SESSION_EXPIRED -> Sessions.expire(client, zk.server().getConnectString());
        case CLIENT_CLOSED -> client.close();
        case NODE_DELETED ->
            zk.newClient().delete().forPath(lock.getParticipantNodes().iterator().next());
      }
    }
  }

  /** What a Flux ended with: its values, and its error or null. */
  private record Outcome(List<Object> values, Throwable error, String errorThread) {}

  private static final class Recorder {
    final List<Object> values = new CopyOnWriteArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    final AtomicReference<String> errorThread = new AtomicReference<>();
    final CountDownLatch ended = new CountDownLatch(1);

    <T> Disposable subscribe(Flux<T> flux) {
      return flux.subscribe(
          values::add,
          failure -> {
            errorThread.set(Thread.currentThread().getName());
            error.set(failure);
            ended.countDown();
          },
          ended::countDown);
    }

    Outcome awaitEnd() throws InterruptedException {
      assertThat(ended.await(30, TimeUnit.SECONDS)).as("the Flux ended").isTrue();
      return new Outcome(List.copyOf(values), error.get(), errorThread.get());
    }

    boolean hasEnded() {
      return ended.getCount() == 0;
    }
  }

  /** Body running x each loss: the body is cancelled, the Flux fails with the loss, no node. */
  @ParameterizedTest
  @EnumSource(Loss.class)
  void bodyRunning_lost_cancelsTheBody_andFailsWithTheLoss(Loss loss) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = new ReentrantMutex(client, zk.path("lock"));
    AtomicBoolean bodyCancelled = new AtomicBoolean();
    Recorder recorder = new Recorder();

    recorder.subscribe(
        ReactiveLocks.withLock(
            lock, hold -> Flux.<Long>never().doOnCancel(() -> bodyCancelled.set(true))));
    await().until(() -> lock.getParticipantNodes().size() == 1);
    loss.inflict(client, lock);

    Outcome outcome = recorder.awaitEnd();
    assertThat(outcome.error()).isInstanceOf(LockOwnershipLostException.class);
    assertThat(outcome.errorThread()).doesNotContain("EventThread");
    assertThat(bodyCancelled).isTrue();
    assertAnotherClientAcquires();
  }

  /**
   * Body completing after the loss was told: the body is cancelled by the loss, so its completion,
   * which comes after, is not seen; the Flux fails with the loss, though the body "completed".
   */
  @ParameterizedTest
  @EnumSource(Loss.class)
  void bodyCompletingAfterTheLossWasTold_theFluxFailsWithTheLoss(Loss loss) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = new ReentrantMutex(client, zk.path("lock"));
    CompletableFuture<Long> bodyResult = new CompletableFuture<>();
    AtomicReference<LockHold> held = new AtomicReference<>();
    Recorder recorder = new Recorder();

    // the body completes when the test says
    recorder.subscribe(keepingTheHold(lock, held, () -> Mono.fromCompletionStage(bodyResult)));
    await().until(() -> held.get() != null);
    loseAndAwaitTold(loss, client, lock, held);
    bodyResult.complete(7L);

    Outcome outcome = recorder.awaitEnd();
    assertThat(outcome.values()).isEmpty();
    assertThat(outcome.error()).isInstanceOf(LockOwnershipLostException.class);
    assertAnotherClientAcquires();
  }

  /**
   * Body completed (or failed) before the loss, which comes while the hold closes: the body's
   * outcome is the Flux's, the loss changes nothing, and the lost hold is closed (its node gone).
   */
  @ParameterizedTest
  @CsvSource({
    "ON_COMPLETE, SESSION_EXPIRED",
    "ON_ERROR, SESSION_EXPIRED",
    "ON_COMPLETE, CLIENT_CLOSED",
    "ON_COMPLETE, NODE_DELETED"
  })
  void holdClosing_lost_keepsTheBodysOutcome(SignalType bodyEnd, Loss loss) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = new ReentrantMutex(client, zk.path("lock"));
    AtomicReference<LockHold> held = new AtomicReference<>();
    Paused release = new Paused(false);
    Recorder recorder = new Recorder();

    recorder.subscribe(
        keepingTheHold(
            lock,
            held,
            () -> {
              release.armInThisThread(); // the next task this thread schedules: the close
              return bodyEnd == SignalType.ON_COMPLETE
                  ? Mono.just(7L)
                  : Mono.error(new IllegalStateException("boom"));
            }));
    release.awaitScheduled();
    loseAndAwaitTold(loss, client, lock, held);
    release.go();

    Outcome outcome = recorder.awaitEnd();
    if (bodyEnd == SignalType.ON_COMPLETE) {
      assertThat(outcome.values()).containsExactly(7L);
      assertThat(outcome.error()).isNull();
    } else {
      assertThat(outcome.error()).isInstanceOf(IllegalStateException.class).hasMessage("boom");
    }
    assertThat(held.get().whenLost().toCompletableFuture().getNow(null))
        .isInstanceOf(LockOwnershipLostException.class);
    assertAnotherClientAcquires();
  }

  /**
   * Hold closing x cancel: the subscriber cancels while the close of the hold is scheduled but has
   * not yet begun. The close still runs: the node is deleted, not left until the session ends.
   */
  @Test
  void holdClosing_cancelled_stillClosesTheHold() throws Exception {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Paused release = new Paused(false);
    Recorder recorder = new Recorder();

    Disposable running =
        recorder.subscribe(
            ReactiveLocks.withLock(
                lock,
                hold -> {
                  release.armInThisThread();
                  return Mono.just(7L);
                }));
    release.awaitScheduled();
    running.dispose();
    release.go();

    await().until(() -> lock.getParticipantNodes().isEmpty());
    assertAnotherClientAcquires();
  }

  /**
   * Granted, body not yet subscribed x loss: the body's subscription task has begun on
   * boundedElastic when the hold is lost. The Flux fails with the loss, and the body is never
   * started: its function is not called once withLock has been told that the hold is lost.
   */
  @ParameterizedTest
  @EnumSource(Loss.class)
  void grantedNotYetSubscribed_lost_neverStartsTheBody_andFailsWithTheLoss(Loss loss)
      throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = new ReentrantMutex(client, zk.path("lock"));
    Paused bodyStart = new Paused(true);
    bodyStart.armAnyThread();
    AtomicBoolean bodyCalled = new AtomicBoolean();
    Recorder recorder = new Recorder();

    recorder.subscribe(
        ReactiveLocks.withLock(
            lock,
            hold -> {
              bodyCalled.set(true);
              return Mono.just(7L);
            }));
    bodyStart.awaitScheduled();
    loss.inflict(client, lock);
    // withLock closes the hold (a task on boundedElastic) only once it has been told of the loss
    bodyStart.awaitAnotherScheduled();
    bodyStart.go();
    Outcome outcome = recorder.awaitEnd();

    assertThat(outcome.error()).isInstanceOf(LockOwnershipLostException.class);
    CuratorFramework admin = zk.newClient();
    await().until(() -> ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).isEmpty());
    assertThat(bodyStart.ran()).as("the body's subscribe task ran to its end").isTrue();
    assertThat(bodyCalled).as("the body's function called").isFalse();
    assertAnotherClientAcquires();
  }

  /**
   * Waiting x session expired: the attempt enqueues again in the new session and is granted once
   * the holder leaves; the old node is gone.
   */
  @Test
  void waiting_sessionExpired_enqueuesAgain_andIsGranted() throws Exception {
    Queue queue = Queue.onOneLock();
    Recorder recorder = new Recorder();
    LockHold held = queue.holder().hold();

    recorder.subscribe(
        ReactiveLocks.withLock(queue.waiter(), hold -> Mono.just(hold.fencingToken())));
    // seen through a client of its own: the waiter's is busy finding its session expired
    CuratorFramework admin = zk.newClient();
    await().until(() -> ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).size() == 2);
    String before = // the waiter's: the later sequence number (names begin with a random id)
        ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).stream()
            .max(Comparator.comparing((String name) -> name.substring(name.length() - 10)))
            .orElseThrow();
    Sessions.expire(queue.waiterClient(), zk.server().getConnectString());
    await()
        .until(() -> !ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).contains(before));
    assertThat(recorder.hasEnded()).isFalse();
    held.close();

    Outcome outcome = recorder.awaitEnd();
    assertThat(outcome.error()).isNull();
    assertThat(outcome.values()).hasSize(1);
    await().until(() -> ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).isEmpty());
  }

  /** Waiting x client closed: the Flux fails at once with a LockException, no body, no node. */
  @Test
  void waiting_clientClosed_failsWithALockException() throws Exception {
    Queue queue = Queue.onOneLock();
    AtomicBoolean bodyCalled = new AtomicBoolean();
    Recorder recorder = new Recorder();

    try (LockHold held = queue.holder().hold()) {
      recorder.subscribe(
          ReactiveLocks.withLock(
              queue.waiter(),
              hold -> {
                bodyCalled.set(true);
                return Mono.empty();
              }));
      await().until(() -> queue.holder().getParticipantNodes().size() == 2);
      queue.waiterClient().close();

      Outcome outcome = recorder.awaitEnd();
      assertThat(outcome.error()).isInstanceOf(LockException.class);
      assertThat(outcome.errorThread()).doesNotContain("EventThread");
      await().until(() -> queue.holder().getParticipantNodes().size() == 1);
      assertThat(held.state()).isEqualTo(LockState.HELD);
    }
    assertThat(bodyCalled).isFalse();
  }

  /**
   * {@code withLock} on {@code lock} with {@code body}, which first keeps its hold in {@code held}.
   */
  private static Flux<Long> keepingTheHold(
      FencedLock lock, AtomicReference<LockHold> held, Supplier<Mono<Long>> body) {
    return ReactiveLocks.withLock(
        lock,
        hold -> {
          held.set(hold);
          return body.get();
        });
  }

  /** Inflicts {@code loss} on the hold kept in {@code held}; returns once the hold has told it. */
  private static void loseAndAwaitTold(
      Loss loss, CuratorFramework client, FencedLock lock, AtomicReference<LockHold> held)
      throws Exception {
    loss.inflict(client, lock);
    await().until(() -> held.get().whenLost().toCompletableFuture().isDone());
  }

  /** A holder and a waiter of one lock, each on a client of its own. */
  private record Queue(CuratorFramework waiterClient, FencedLock holder, FencedLock waiter) {
    static Queue onOneLock() {
      CuratorFramework waiterClient = zk.newClient();
      return new Queue(
          waiterClient,
          new ReentrantMutex(zk.newClient(), zk.path("lock")),
          new ReentrantMutex(waiterClient, zk.path("lock")));
    }
  }

  private static void assertAnotherClientAcquires() throws InterruptedException {
    FencedLock other = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Optional<LockHold> hold = other.tryHold(Duration.ofSeconds(10));
    assertThat(hold).as("another client acquires").isPresent();
    hold.get().close();
  }

  /**
   * One task scheduled on Reactor's schedulers held back until the test says: the first scheduled
   * (by any thread, or by the thread that armed it). If Reactor cancels the task while it is held
   * back (interrupting it), it does not run, as a task cancelled before it began would not.
   */
  private static final class Paused {
    private final CountDownLatch scheduled = new CountDownLatch(1);
    private final CountDownLatch go = new CountDownLatch(1);
    private final CountDownLatch scheduledAfter = new CountDownLatch(1);
    private final AtomicBoolean ran = new AtomicBoolean();
    private final AtomicReference<Object> armedFor = new AtomicReference<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final boolean runsIfCancelled;

    /** {@code runsIfCancelled}: the task had begun, and a cancel's interrupt does not stop it. */
    Paused(boolean runsIfCancelled) {
      this.runsIfCancelled = runsIfCancelled;
    }

    void armAnyThread() {
      arm(Boolean.TRUE);
    }

    void armInThisThread() {
      arm(Thread.currentThread());
    }

    private void arm(Object who) {
      armedFor.set(who);
      Schedulers.onScheduleHook(
          HOOK,
          task -> {
            Object armed = armedFor.get();
            boolean mine =
                armed != null
                    && (armed == Boolean.TRUE || armed == Thread.currentThread())
                    && armedFor.compareAndSet(armed, null);
            if (!mine && scheduled.getCount() == 0) {
              scheduledAfter.countDown();
            }
            return mine ? () -> holdBack(task) : task;
          });
    }

    private void holdBack(Runnable task) {
      scheduled.countDown();
      boolean interrupted = false;
      while (true) {
        try {
          var unused = go.await(20, TimeUnit.SECONDS);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
          cancelled.set(true);
        }
      }
      if (!interrupted || runsIfCancelled) {
        task.run();
        ran.set(true);
      } else {
        Thread.currentThread().interrupt();
      }
    }

    void awaitScheduled() throws InterruptedException {
      assertThat(scheduled.await(10, TimeUnit.SECONDS)).as("the task scheduled").isTrue();
    }

    /** Waits until another task is scheduled after the one held back (and it was held back). */
    void awaitAnotherScheduled() throws InterruptedException {
      assertThat(scheduledAfter.await(30, TimeUnit.SECONDS)).as("a task scheduled after").isTrue();
    }

    void go() {
      go.countDown();
    }

    boolean cancelled() {
      return cancelled.get();
    }

    boolean ran() {
      return ran.get();
    }
  }
}
