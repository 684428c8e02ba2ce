package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LockstepLock#whenLost()}: the loss stage of the calling thread's hold, as a {@code
 * LockHold} has one, bound to that hold (its fencing token) and to no later hold of the lock
 * object, which every thread shares.
 */
@Timeout(60)
class LockstepLockWhenLostTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void completesWithTheLoss_whenTheTtlRunsOut() throws Exception {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    lock.lock(Duration.ofMillis(300));
    CompletableFuture<LockOwnershipLostException> lost = lock.whenLost().toCompletableFuture();

    assertThat(lost.get(10, TimeUnit.SECONDS))
        .isInstanceOf(LockOwnershipLostException.class)
        .hasMessageContaining("time to live");
    assertThat(lock.whenLost().toCompletableFuture()).as("asked after the loss").isDone();
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  @Test
  void anUnlostHold_letGo_cancelsItsStage_onTheLastUnlockOnly() throws Exception {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    lock.lock();
    CompletableFuture<LockOwnershipLostException> first = lock.whenLost().toCompletableFuture();
    lock.lock(); // reentrant: the same hold
    CompletableFuture<LockOwnershipLostException> second = lock.whenLost().toCompletableFuture();
    lock.unlock();
    assertThat(first).isNotDone();
    assertThat(second).isNotDone();

    lock.unlock();

    await().until(() -> first.isDone() && second.isDone());
    assertThatThrownBy(first::join)
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(CancellationException.class);
    assertThatThrownBy(second::join)
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(CancellationException.class);
    assertThatThrownBy(lock::whenLost).isInstanceOf(IllegalMonitorStateException.class);
  }

  @Test
  void theStageOfOneHold_isNeverCompletedByTheLossOfALaterHold_ofThisThreadOrAnother()
      throws Exception {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    lock.lock();
    long firstToken = lock.fencingToken();
    CompletableFuture<LockOwnershipLostException> first = lock.whenLost().toCompletableFuture();
    lock.unlock();

    try (LockThread other = new LockThread("another thread")) {
      AtomicReference<CompletableFuture<LockOwnershipLostException>> others =
          new AtomicReference<>();
      other
          .run(
              () -> {
                lock.lock(Duration.ofMillis(300)); // lost at its time to live
                others.set(lock.whenLost().toCompletableFuture());
              })
          .get(10, TimeUnit.SECONDS);
      lock.lock(Duration.ofMillis(300)); // this thread's next hold: waits for the other's loss
      long secondToken = lock.fencingToken();
      CompletableFuture<LockOwnershipLostException> second = lock.whenLost().toCompletableFuture();

      assertThat(others.get().get(10, TimeUnit.SECONDS)).hasMessageContaining("time to live");
      assertThat(second.get(10, TimeUnit.SECONDS)).hasMessageContaining("time to live");
      assertThat(secondToken).isGreaterThan(firstToken);
      assertThat(first).isCompletedExceptionally();
      assertThatThrownBy(first::join)
          .isInstanceOf(CompletionException.class)
          .hasCauseInstanceOf(CancellationException.class);
      assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
      other
          .run(
              () ->
                  assertThatThrownBy(lock::unlock)
                      .isInstanceOf(ConcurrentModificationException.class))
          .get(10, TimeUnit.SECONDS);
    }
  }
}
