package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Holds as handles: {@code acquireAsync}, {@code hold}, {@code tryHold}. Cancelling, timing out and
 * closing, in every order and racing the grant, leave no node, no watch and no hold behind (the
 * extension checks the server after each test).
 */
@Timeout(120)
class LockHoldTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquireAsync_onAFreeLock_completesWithAHold_thatCloseReleases(LockKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    FencedLock lock = kind.newLock(zk.newClient(), zk.path("lock"));

    LockHold hold = lock.acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS);

    assertThat(hold.state()).isEqualTo(LockState.HELD);
    assertThat(lock.isAcquiredInThisProcess()).isTrue();
    String node = lock.getParticipantNodes().iterator().next();
    Stat stat = admin.checkExists().forPath(node);
    if (kind != LockKind.MULTI_MUTEX && kind != LockKind.MULTI_MUTEX_MIXED_MODES) {
      assertThat(hold.fencingToken()).isEqualTo(stat.getCzxid());
    }
    assertThat(hold.ownershipChecks()).hasSize(kind.lockPaths(zk.path("lock")).size());
    hold.checkHeld();

    hold.close();
    hold.close(); // idempotent

    assertThat(hold.state()).isEqualTo(LockState.RELEASED);
    assertThat(lock.getParticipantNodes()).isEmpty();
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThatThrownBy(hold::fencingToken).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void acquireAsync_completesOffZooKeepersThread_onTheExecutorGiven() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ExecutorService mine = Executors.newSingleThreadExecutor(r -> new Thread(r, "mine"));
    try {
      // the other client holds until the stage is attached: a stage attached after completion
      // would run in the attaching thread (CompletableFuture's rule), whoever completed it
      other.acquire();
      AtomicReference<String> defaultThread = new AtomicReference<>();
      CompletableFuture<LockHold> first =
          lock.acquireAsync()
              .thenApply(
                  hold -> {
                    defaultThread.set(Thread.currentThread().getName());
                    return hold;
                  })
              .toCompletableFuture();
      other.release();
      first.get(10, TimeUnit.SECONDS).close();
      assertThat(defaultThread.get()).doesNotContain("EventThread").startsWith("lockstep-");

      other.acquire();
      AtomicReference<String> chosenThread = new AtomicReference<>();
      CompletableFuture<LockHold> second =
          lock.acquireAsync(Duration.ofSeconds(10), mine)
              .thenApply(
                  hold -> {
                    chosenThread.set(Thread.currentThread().getName());
                    return hold;
                  })
              .toCompletableFuture();
      other.release();
      second.get(10, TimeUnit.SECONDS).close();
      assertThat(chosenThread.get()).isEqualTo("mine");
    } finally {
      mine.shutdownNow();
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void cancellingAWaitingAttempt_leavesNothing(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    int holderNodes = holder.getParticipantNodes().size();

    CompletableFuture<LockHold> waiting = waiter.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() > holderNodes);
    assertThat(waiting.cancel(true)).isTrue();

    await()
        .untilAsserted(
            () -> {
              assertThat(holder.getParticipantNodes()).hasSize(holderNodes);
              assertThat(zk.stats().watchedPaths(Sessions.id(waiterClient))).isEmpty();
            });
    assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    holder.release();
  }

  @Test
  void cancelRacingTheGrant_neverLeaksTheHold() throws Exception {
    CuratorFramework holderClient = zk.newClient();
    CuratorFramework waiterClient = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(holderClient, zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(waiterClient, zk.path("lock"));
    int granted = 0;
    for (int round = 0; round < 30; round++) {
      LockHold held = holder.hold();
      CompletableFuture<LockHold> waiting = waiter.acquireAsync().toCompletableFuture();
      await().until(() -> holder.getParticipantNodes().size() == 2);

      held.close(); // the grant is on its way...
      boolean cancelled = waiting.cancel(true); // ...and the cancel races it

      if (!cancelled) {
        granted++;
        waiting.get().close();
      }
      await()
          .untilAsserted(
              () -> {
                assertThat(holder.getParticipantNodes()).isEmpty();
                assertThat(waiter.isAcquiredInThisProcess()).isFalse();
              });
    }
    System.out.println("cancel raced the grant 30 times; the grant won " + granted);
  }

  @Test
  void acquireAsyncWithABudget_failsWithTimeout_onceTheAttemptIsGone() throws Exception {
    CuratorFramework waiterClient = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(waiterClient, zk.path("lock"));
    holder.acquire();
    List<String> holderNodes = List.copyOf(holder.getParticipantNodes());

    CompletableFuture<List<String>> seenAtTimeout =
        waiter
            .acquireAsync(Duration.ofMillis(300))
            .toCompletableFuture()
            .handle(
                (hold, failure) -> {
                  assertThat(failure).isInstanceOf(TimeoutException.class);
                  return List.copyOf(holder.getParticipantNodes());
                });

    assertThat(seenAtTimeout.get(10, TimeUnit.SECONDS)).isEqualTo(holderNodes);
    assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    holder.release();
  }

  @Test
  void closingTheClient_failsAnAsyncWaiter_andLosesAHold() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    ReentrantMutex other = new ReentrantMutex(client, zk.path("lock"));
    LockHold hold = lock.hold();
    CompletableFuture<LockHold> waiting = other.acquireAsync().toCompletableFuture();
    await().until(() -> lock.getParticipantNodes().size() == 2);

    client.close();

    assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(LockException.class);
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    assertThatThrownBy(hold::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    hold.close(); // does not throw
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThat(other.isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void sessionLossWhileHolding_makesTheHoldLost_andCloseDoesNotThrow() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    LockHold hold = lock.hold();

    Sessions.expire(client, zk.server().getConnectString());

    await().until(() -> hold.state() == LockState.LOST);
    assertThatThrownBy(hold::checkHeld)
        .isInstanceOf(LockOwnershipLostException.class)
        .hasMessageContaining(zk.path("lock"));
    assertThatThrownBy(hold::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(hold::ownershipChecks).isInstanceOf(LockOwnershipLostException.class);
    hold.close();
    assertThat(hold.state()).isEqualTo(LockState.RELEASED);
  }

  @Test
  void tryHold_withTryWithResources_andAZeroBudgetWhenHeld() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    try (LockHold hold = holder.hold()) {
      assertThat(other.tryHold(Duration.ZERO)).isEmpty();
      assertThat(holder.getParticipantNodes()).hasSize(1);
      hold.checkHeld();
    }
    ZeroBudgetTry.granted(
            "tryHold(0) of a free lock",
            () -> other.tryHold(Duration.ZERO),
            Optional::isPresent,
            () -> other.tryHold(Duration.ofSeconds(10)))
        .orElseThrow()
        .close();
  }

  @Test
  void aHandle_isNotReentrantWithTheThreadBoundAcquire() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.acquire();
    try {
      assertThat(lock.tryHold(Duration.ofMillis(200))).as("waits behind its own hold").isEmpty();
      assertThat(lock.getHoldCount()).isEqualTo(1);
    } finally {
      lock.release();
    }
  }

  @Test
  void handles_canBeClosedByAnotherThread() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    LockHold hold = lock.hold();
    try (LockThread other = new LockThread("other")) {
      other.run(hold::close).get(10, TimeUnit.SECONDS);
    }
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void badBudgetsAndExecutors_areRefusedByName_andSendNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    long before = zk.requestsSoFar(client);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));

    assertThatThrownBy(() -> lock.acquireAsync(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> lock.acquireAsync(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> lock.acquireAsync(Duration.ZERO, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("executor");
    assertThatThrownBy(() -> lock.tryHold(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> lock.tryHold(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");

    assertThat(zk.requestsSoFar(client)).isEqualTo(before);
  }

  @Test
  void aCancelledStage_isCancelled_notFailed() {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    CompletableFuture<LockHold> stage = lock.acquireAsync().toCompletableFuture();
    if (stage.cancel(true)) {
      assertThatThrownBy(stage::join).isInstanceOf(CancellationException.class);
    } else {
      stage.join().close(); // granted before the cancel
    }
    await().until(() -> !lock.isAcquiredInThisProcess());
  }
}
