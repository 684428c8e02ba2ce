package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A request withdrawn while one of its attempts is still starting (a close of the semaphore object,
 * or a cancel of the stage, in another thread): the withdrawal waits for the start, the request
 * ends, and no node is left, so Curator's semaphore, whose waiters always take the {@code locks}
 * mutex, gets the lease that is free. The start is held at the mutex's first create: a request
 * resolves the mutex's node shape ahead, in the caller's thread, and when that failed, the create
 * asks the client's ACLProvider again as the mutex attempt starts (off ZooKeeper's event thread).
 * This ACLProvider fails the first ask for a {@code locks} node, and holds the second until the
 * test has withdrawn the request.
 */
@Timeout(60)
class CountingSemaphoreStartRaceTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final CountDownLatch starting = new CountDownLatch(1);
  private final CountDownLatch resume = new CountDownLatch(1);
  private final AtomicInteger locksAsks = new AtomicInteger();

  /** Fails the first ask for a {@code locks} node, and pauses the second until {@link #resume}. */
  private final ACLProvider pausesTheMutexStart =
      new ACLProvider() {
        @Override
        public List<ACL> getDefaultAcl() {
          return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
          int ask = path.contains("/locks/") ? locksAsks.incrementAndGet() : 0;
          if (ask == 1) {
            throw new IllegalStateException("not yet: the mutex's create asks again");
          }
          if (ask == 2) {
            starting.countDown();
            try {
              resume.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }
      };

  @Test
  void closedWhileItsMutexAttemptStarts_theRequestEnds_andNoNodeIsLeft() throws Exception {
    withdrawnWhileTheMutexStarts(
        (semaphore, stage) -> {
          semaphore.close(); // threw a NullPointerException, and the request never ended
        });
  }

  @Test
  void cancelledWhileItsMutexAttemptStarts_theRequestEnds_andNoNodeIsLeft() throws Exception {
    withdrawnWhileTheMutexStarts((semaphore, stage) -> stage.cancel(true));
  }

  private void withdrawnWhileTheMutexStarts(Withdrawal withdrawal) throws Exception {
    String path = zk.path("semaphore");
    LockHold taken = new CountingSemaphore(zk.newClient(), path, 1).hold(); // the only lease
    CountingSemaphore semaphore =
        new CountingSemaphore(zk.newClient(b -> b.aclProvider(pausesTheMutexStart)), path, 1);
    CompletableFuture<LockHold> stage =
        semaphore.acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    assertThat(starting.await(10, TimeUnit.SECONDS)).as("the mutex attempt starts").isTrue();

    withdrawal.accept(semaphore, stage);
    resume.countDown();

    await().atMost(Duration.ofSeconds(10)).until(stage::isDone);
    assertThat(stage).isCompletedExceptionally();
    taken.close();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(ZooKeeperExtension.childrenOrNone(zk.newClient(), path + "/locks"))
                    .as("locks nodes left")
                    .isEmpty());
    Lease lease = new InterProcessSemaphoreV2(zk.newClient(), path, 1).acquire(5, TimeUnit.SECONDS);
    assertThat(lease).as("Curator's acquire of the free lease").isNotNull();
    lease.close();
  }

  /** How the request is withdrawn while its mutex attempt starts. */
  @FunctionalInterface
  private interface Withdrawal {
    void accept(CountingSemaphore semaphore, CompletableFuture<LockHold> stage) throws Exception;
  }
}
