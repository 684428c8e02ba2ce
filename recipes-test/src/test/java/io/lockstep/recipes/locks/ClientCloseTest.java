package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Closing a Curator client is terminal, and Curator posts no {@code LOST} for it: the locks must
 * end every attempt and every hold of that client themselves. Waiters fail promptly with {@link
 * LockException} (not at the end of their budget, nor never); holders are told their lock is lost.
 */
@Timeout(90)
class ClientCloseTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Well under any waiter's budget, and ample for a closed client to fail its waiters. */
  private static final long PROMPTLY_SECONDS = 5;

  // Breach 2: an untimed waiter on a closed client waited forever.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquire_waitingWhenTheClientIsClosed_failsPromptlyWithLockException(LockKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    int holderNodes = holder.getParticipantNodes().size();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2 * holderNodes);

      waiterClient.close();

      assertThatThrownBy(() -> waiting.get(PROMPTLY_SECONDS, TimeUnit.SECONDS))
          .as("untimed acquire on a client closed while waiting")
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockException.class);
      assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    }
    await().until(() -> holder.getParticipantNodes().size() == holderNodes);
    holder.release();
  }

  // Breach 2: a timed waiter on a closed client ran out its whole budget instead of failing.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void timedAcquire_waitingWhenTheClientIsClosed_failsPromptlyWithLockException(LockKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    int holderNodes = holder.getParticipantNodes().size();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Boolean> waiting = thread.call(() -> waiter.acquire(60, TimeUnit.SECONDS));
      await().until(() -> holder.getParticipantNodes().size() == 2 * holderNodes);

      waiterClient.close();

      assertThatThrownBy(() -> waiting.get(PROMPTLY_SECONDS, TimeUnit.SECONDS))
          .as("acquire(60 s) on a client closed while waiting")
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockException.class);
      assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    }
    await().until(() -> holder.getParticipantNodes().size() == holderNodes);
    holder.release();
  }

  // Breach 2: a holder on a closed client was never told, and kept passing checkHeld() while
  // another client held the lock.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void holder_whenItsClientIsClosed_hearsLostAndChecksThrowWhileAnotherHolds(LockKind kind)
      throws Exception {
    CuratorFramework holderClient = zk.newClient();
    FencedLock holder = kind.newLock(holderClient, zk.path("lock"));
    FencedLock next = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();

    holderClient.close(); // its session ends, and with it the holder's nodes

    try (LockThread thread = new LockThread("next")) {
      assertThat(thread.call(() -> next.acquire(20, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS))
          .as("another client acquires once the closed client's nodes are gone")
          .isTrue();

      await("the holder on the closed client hears LOST")
          .atMost(Duration.ofSeconds(PROMPTLY_SECONDS))
          .until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      assertThatThrownBy(holder::fencingToken).isInstanceOf(LockOwnershipLostException.class);
      holder.release(); // a lost hold: clears local state without throwing
      assertThat(holder.isAcquiredInThisProcess()).isFalse();
      assertThat(states).endsWith(LockState.LOST, LockState.RELEASED);
      thread.run(next::release).get(10, TimeUnit.SECONDS);
    }
  }
}
