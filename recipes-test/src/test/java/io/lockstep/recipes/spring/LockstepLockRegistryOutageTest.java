package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The registry while its ZooKeeper server is down and after it is back within the session timeout:
 * the behaviour Spring's {@code ZkLockRegistryTests} pins for {@code ZookeeperLockRegistry} (a
 * timed try gives up within its budget, an interrupt ends an interruptible wait, and after the
 * restart new locks are granted and a hold from before the outage is still the thread's). The class
 * has a server of its own, as the test stops it.
 */
@Timeout(90)
class LockstepLockRegistryOutageTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Long enough for the session to outlive the outage, short for the connection. */
  private static CuratorFramework shortTimeoutClient() {
    return zk.newClient(builder -> builder.sessionTimeoutMs(15_000).connectionTimeoutMs(1_000));
  }

  @Test
  void
      serverDown_tryLockGivesUpWithinItsBudget_anInterruptEndsLockInterruptibly_andAfterTheRestart_locksAreGrantedAndTheOldHoldIsStillOurs()
          throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(shortTimeoutClient(), zk.path("r"));
    LockstepLock orders = registry.obtain("orders");
    List<LockState> ordersStates = new CopyOnWriteArrayList<>();
    orders.fencedLock().getStateListenable().addListener(c -> ordersStates.add(c.state()));
    orders.lock();
    long ordersToken = orders.fencingToken();

    zk.server().stop();

    LockstepLock invoices = registry.obtain("invoices");
    long start = System.nanoTime();
    assertThat(invoices.tryLock(1, TimeUnit.SECONDS)).as("tryLock with the server down").isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("tryLock(1 s) returns within Spring's bound")
        .isLessThan(Duration.ofSeconds(3));

    LockstepLock interruptible = registry.obtain("interruptible");
    CountDownLatch attemptStarted = new CountDownLatch(1);
    LockObservers.of(interruptible.fencedLock())
        .addListener(
            new LockObserver() {
              @Override
              public void attemptStarted(LockAttempt attempt) {
                attemptStarted.countDown();
              }
            });
    try (LockThread thread = new LockThread("interruptible")) {
      CompletableFuture<Void> waiting = thread.run(interruptible::lockInterruptibly);
      assertThat(attemptStarted.await(10, TimeUnit.SECONDS)).isTrue();
      thread.thread().interrupt();
      assertThat(waiting)
          .as("lockInterruptibly ends on the interrupt within Spring's bound")
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(InterruptedException.class);
    }

    zk.server().restart();

    assertThat(invoices.tryLock(10, TimeUnit.SECONDS)).as("a new lock after the restart").isTrue();
    assertThat(orders.tryLock(1, TimeUnit.SECONDS))
        .as("the hold from before the outage is still this thread's: a reentrant try")
        .isTrue();
    assertThat(orders.fencingToken()).as("the same hold").isEqualTo(ordersToken);
    LockstepLock shipments = registry.obtain("shipments");
    assertThat(shipments.tryLock(1, TimeUnit.SECONDS)).as("a lock obtained after").isTrue();
    await()
        .until(
            () -> ordersStates.equals(List.of(LockState.HELD, LockState.AT_RISK, LockState.HELD)));

    orders.unlock();
    orders.unlock();
    invoices.unlock();
    shipments.unlock();
    assertThat(orders.fencedLock().isAcquiredInThisProcess()).isFalse();
    assertThat(interruptible.tryLock())
        .as("the interrupted attempt left nothing in the way")
        .isTrue();
    interruptible.unlock();
  }

  /**
   * The difference docs/spring.md states: Spring's {@code lockInterruptibly()} tries again every
   * second until ZooKeeper is back or the thread is interrupted; ours, like {@code lock()}, has no
   * budget and throws {@link LockException} once the client's retry policy gives up.
   */
  @Test
  void serverDown_lockInterruptibly_throwsLockException_whenTheClientGivesUpTheConnection()
      throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(shortTimeoutClient(), zk.path("r"));
    LockstepLock lock = registry.obtain("orders");

    zk.server().stop();
    try (LockThread thread = new LockThread("locker")) {
      assertThat(thread.run(lock::lockInterruptibly))
          .failsWithin(Duration.ofSeconds(60))
          .withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(LockException.class);
    } finally {
      zk.server().restart();
    }

    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).as("after the restart").isTrue();
    lock.unlock();
  }
}
