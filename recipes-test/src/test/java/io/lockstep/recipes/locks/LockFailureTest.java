package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What every exclusive lock does when things go wrong: timeouts, interrupts, wrong owners, lost
 * nodes and expired sessions. After each test the extension checks that no node and no watch is
 * left on the server.
 */
@Timeout(60)
class LockFailureTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void timedAcquire_whenHeld_returnsFalseWithinItsBudgetAndLeavesNothing(LockKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    List<String> holderNodes = List.copyOf(holder.getParticipantNodes());

    long start = System.nanoTime();
    boolean acquired = waiter.acquire(400, TimeUnit.MILLISECONDS);
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(acquired).isFalse();
    assertThat(elapsedMillis).isBetween(400L, 400L + 2_000L);
    assertWaiterLeftNothing(holder, holderNodes, waiterClient);
    holder.release();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void interruptedAcquire_throwsAndLeavesNothing(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    List<String> holderNodes = List.copyOf(holder.getParticipantNodes());
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() > holderNodes.size());

      thread.thread().interrupt();

      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    }
    assertWaiterLeftNothing(holder, holderNodes, waiterClient);
    holder.release();
  }

  /** Only the holder's nodes remain, and the waiter's session watches nothing any more. */
  private static void assertWaiterLeftNothing(
      FencedLock holder, List<String> holderNodes, CuratorFramework waiterClient) throws Exception {
    long waiterSession = Sessions.id(waiterClient);
    await()
        .untilAsserted(
            () -> {
              assertThat(holder.getParticipantNodes()).isEqualTo(holderNodes);
              assertThat(zk.stats().watchedPaths(waiterSession)).isEmpty();
            });
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void release_byACallerThatDoesNotHold_throwsNamingThePath(LockKind kind) throws Exception {
    FencedLock lock = kind.newLock(zk.newClient(), zk.path("lock"));
    assertThatThrownBy(lock::release)
        .isInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining(zk.path("lock"));

    if (kind.isThreadBound()) {
      lock.acquire();
      try (LockThread other = new LockThread("other")) {
        assertThatThrownBy(() -> other.run(lock::release).get(10, TimeUnit.SECONDS))
            .hasCauseInstanceOf(IllegalMonitorStateException.class)
            .hasMessageContaining(zk.path("lock"));
      }
      assertThat(lock.isAcquiredInThisProcess()).isTrue();
      lock.release();
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void holderNodeDeleted_isReportedLost(LockKind kind) throws Exception {
    assumeTrue(kind.detectsNodeDeletion(), "multi-locks notice only session loss");
    CuratorFramework admin = zk.newClient();
    FencedLock lock = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    lock.acquire();

    for (String node : lock.getParticipantNodes()) {
      admin.delete().forPath(node);
    }

    await().until(() -> states.contains(LockState.LOST));
    assertThatThrownBy(lock::checkHeld)
        .isInstanceOf(LockOwnershipLostException.class)
        .hasMessageContaining(zk.path("lock"))
        .hasMessageContaining("session 0x");
    assertThatThrownBy(lock::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    lock.release(); // clears local state without throwing
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThat(states).containsExactly(LockState.HELD, LockState.LOST, LockState.RELEASED);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void holderNodeDeletedUnderContention_isReportedLost(LockKind kind) throws Exception {
    assumeTrue(kind.detectsNodeDeletion(), "multi-locks notice only session loss");
    CuratorFramework admin = zk.newClient();
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    List<String> holderNodes = List.copyOf(holder.getParticipantNodes());
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() > holderNodes.size());

      for (String node : holderNodes) {
        admin.delete().forPath(node);
      }

      waiting.get(10, TimeUnit.SECONDS);
      await().until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      holder.release();
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void holderSessionExpired_isReportedLost(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    lock.acquire();

    Sessions.expire(client, zk.server().getConnectString());

    await().until(() -> states.contains(LockState.LOST));
    assertThatThrownBy(lock::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    lock.release();
    assertThat(states).endsWith(LockState.LOST, LockState.RELEASED);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void waiterSessionExpired_enqueuesAgainAndIsGrantedLater(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient();
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    int holderNodes = holder.getParticipantNodes().size();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2 * holderNodes);
      List<String> before = List.copyOf(holder.getParticipantNodes());

      Sessions.expire(waiterClient, zk.server().getConnectString());

      await()
          .untilAsserted(
              () ->
                  assertThat(holder.getParticipantNodes())
                      .hasSize(2 * holderNodes)
                      .isNotEqualTo(before));
      assertThat(waiting).isNotDone();
      holder.release();
      waiting.get(10, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void waiterSessionExpired_withoutRetries_failsClearly(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = zk.newClient(b -> b.retryPolicy(new RetryNTimes(0, 0)));
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    int holderNodes = holder.getParticipantNodes().size();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2 * holderNodes);

      Sessions.expire(waiterClient, zk.server().getConnectString());

      assertThatThrownBy(() -> waiting.get(20, TimeUnit.SECONDS))
          .hasCauseInstanceOf(LockException.class)
          .hasMessageContaining(zk.path("lock"));
      assertThat(waiter.isAcquiredInThisProcess()).isFalse();
      assertThat(holder.getParticipantNodes()).hasSize(holderNodes);
    }
    holder.release();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void waiting_parksTheThreadWithoutAnObjectMonitor(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2 * kind.lockPaths("/x").size());
      long id = thread.thread().getId();

      await()
          .untilAsserted(
              () -> {
                ThreadInfo info =
                    ManagementFactory.getThreadMXBean()
                        .getThreadInfo(new long[] {id}, true, true)[0];
                assertThat(info.getThreadState()).isEqualTo(Thread.State.WAITING);
                assertThat(info.getLockedMonitors()).isEmpty();
                assertThat(Arrays.stream(info.getStackTrace()).map(StackTraceElement::toString))
                    .noneMatch(frame -> frame.startsWith("java.base/java.lang.Object.wait"))
                    .anyMatch(frame -> frame.contains("LockSupport.park"));
              });
      holder.release();
      waiting.get(10, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquireAfterTheClientIsClosed_failsClearly(LockKind kind) {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    client.close();

    assertThatThrownBy(lock::acquire)
        .isInstanceOf(LockException.class)
        .hasMessageContaining(zk.path("lock"))
        .hasMessageContaining("closed");
    await().atMost(Duration.ofSeconds(5)).until(() -> !lock.isAcquiredInThisProcess());
  }
}
