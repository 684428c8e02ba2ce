package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What only the non-reentrant mutex does: holds owned by the object, released by any thread. */
@Timeout(60)
class NonReentrantMutexTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void release_fromAnotherThread_releasesTheHold() throws Exception {
    NonReentrantMutex lock = new NonReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.acquire();

    try (LockThread other = new LockThread("other")) {
      other.run(lock::release).get(10, TimeUnit.SECONDS);
    }

    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void untimedAcquire_byTheHoldingThread_failsFastAndSendsNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    NonReentrantMutex lock = new NonReentrantMutex(client, zk.path("lock"));
    lock.acquire();
    long before = zk.requestsSoFar(client);

    assertThatThrownBy(lock::acquire)
        .isInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining(zk.path("lock"));

    assertThat(zk.requestsSoFar(client) - before).isZero();
    lock.release();
  }

  @Test
  void timedAcquire_byTheHoldingThread_returnsFalse() throws Exception {
    NonReentrantMutex lock = new NonReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.acquire();

    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).isFalse();

    assertThat(lock.getParticipantNodes()).hasSize(1);
    lock.release();
  }

  @Test
  void secondThreadOfTheSameObject_waitsUntilTheFirstHoldIsReleased() throws Exception {
    NonReentrantMutex lock = new NonReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.acquire();
    long firstToken = lock.fencingToken();
    try (LockThread second = new LockThread("second")) {
      CompletableFuture<Void> waiting = second.run(lock::acquire);
      await().pollDelay(java.time.Duration.ofMillis(200)).until(() -> !waiting.isDone());

      lock.release();

      waiting.get(10, TimeUnit.SECONDS);
      assertThat(lock.fencingToken()).isGreaterThan(firstToken);
      lock.release();
    }
  }
}
