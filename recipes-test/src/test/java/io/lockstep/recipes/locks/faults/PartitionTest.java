package io.lockstep.recipes.locks.faults;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.Sessions;
import io.lockstep.testing.TcpProxy;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A holder cut off from ZooKeeper, silently, for longer than its session. */
@Timeout(90)
class PartitionTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private TcpProxy proxy;

  @BeforeEach
  void startProxy() {
    proxy = TcpProxy.start("127.0.0.1", zk.server().getPort());
  }

  @AfterEach
  void stopProxy() {
    proxy.close();
  }

  @Test
  void silentlyPartitionedHolder_isToldAtRiskBeforeTheLockPassesOn_thenLost() throws Exception {
    CuratorFramework holderClient = throughProxy(4_000);
    ReentrantMutex holder = new ReentrantMutex(holderClient, zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, firstSeen);
    holder.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Long> grantedAt =
          thread.call(
              () -> {
                waiter.acquire();
                return System.nanoTime();
              });
      await().until(() -> waiter.getParticipantNodes().size() == 2);

      proxy.blackhole();

      long granted = grantedAt.get(30, TimeUnit.SECONDS);
      assertThat(firstSeen).containsKey(LockState.AT_RISK);
      assertThat(firstSeen.get(LockState.AT_RISK))
          .as("the holder was told its lock was at risk before the lock passed on")
          .isLessThan(granted);

      proxy.heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      holder.release();
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(states).startsWith(LockState.HELD, LockState.AT_RISK).contains(LockState.LOST);
  }

  /**
   * A waiter of the same client that gives up while the link is silent asks the server to remove
   * its watch, and that request is still unanswered when the client notices the dead connection.
   * ZooKeeper's client (3.9) reports a failed local-only watch removal as a watch event in the
   * Disconnected state and then drops the real Disconnected event as a repeat: Curator would never
   * go SUSPENDED, and the holder would never hear AT_RISK while its session expired.
   */
  @Test
  void aWaiterGivingUpDuringTheSilence_doesNotHideTheDisconnectFromTheHolder() throws Exception {
    CuratorFramework partitioned = throughProxy(4_000);
    CuratorFramework other = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(partitioned, zk.path("held"));
    ReentrantMutex next = new ReentrantMutex(other, zk.path("held"));
    ReentrantMutex busy = new ReentrantMutex(other, zk.path("busy"));
    ReentrantMutex givingUp = new ReentrantMutex(partitioned, zk.path("busy"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, firstSeen);
    holder.acquire();
    busy.acquire();
    try (LockThread giver = new LockThread("giving-up");
        LockThread waiter = new LockThread("next")) {
      CompletableFuture<Boolean> gaveUp = giver.call(() -> givingUp.acquire(1_500, MILLISECONDS));
      String busyNode = busy.getParticipantNodes().iterator().next();
      await().until(() -> zk.stats().watchedPaths(Sessions.id(partitioned)).contains(busyNode));

      proxy.blackhole();
      CompletableFuture<Long> grantedAt =
          waiter.call(
              () -> {
                next.acquire();
                return System.nanoTime();
              });
      // it returns once its node is deleted, or after a connection timeout's grace
      assertThat(gaveUp.get(30, TimeUnit.SECONDS)).as("the waiter gave up").isFalse();
      long granted = grantedAt.get(30, TimeUnit.SECONDS);
      assertThat(firstSeen).as("the holder heard AT_RISK").containsKey(LockState.AT_RISK);
      assertThat(firstSeen.get(LockState.AT_RISK))
          .as("the holder was told its lock was at risk before the lock passed on")
          .isLessThan(granted);

      proxy.heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      holder.release();
      waiter.run(next::release).get(10, TimeUnit.SECONDS);
    }
    busy.release();
  }

  /**
   * A watch removal that fails with the connection is sent again once the client reconnects in the
   * same session: the client sets its watches again on reconnecting, and without the second removal
   * the gone waiter's watch would stay on the server until the node it watched changed.
   */
  @Test
  void aWatchRemovalCutOffByThePartition_isSentAgainAfterTheReconnect() throws Exception {
    CuratorFramework partitioned = throughProxy(8_000);
    CuratorFramework other = zk.newClient();
    ReentrantMutex busy = new ReentrantMutex(other, zk.path("busy"));
    ReentrantMutex givingUp = new ReentrantMutex(partitioned, zk.path("busy"));
    ReentrantMutex holder = new ReentrantMutex(partitioned, zk.path("held"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, new ConcurrentHashMap<>());
    holder.acquire();
    busy.acquire();
    long session = Sessions.id(partitioned);
    String busyNode = busy.getParticipantNodes().iterator().next();
    try (LockThread giver = new LockThread("giving-up")) {
      CompletableFuture<Boolean> gaveUp = giver.call(() -> givingUp.acquire(1_000, MILLISECONDS));
      await().until(() -> zk.stats().watchedPaths(session).contains(busyNode));

      proxy.blackhole();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      proxy.heal();
      assertThat(gaveUp.get(30, TimeUnit.SECONDS)).as("the waiter gave up").isFalse();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> states.lastIndexOf(LockState.HELD) > states.indexOf(LockState.AT_RISK));
    }
    assertThat(Sessions.id(partitioned)).as("the same session").isEqualTo(session);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(zk.stats().watchedPaths(session))
                    .as("the gone waiter's watch, set again by the reconnect, is removed")
                    .doesNotContain(busyNode));
    holder.release();
    busy.release();
  }

  /** A client that reaches the server through the proxy, with a short retry policy. */
  private CuratorFramework throughProxy(int sessionTimeoutMs) {
    return zk.newClient(
        b ->
            b.connectString(proxy.connectString())
                .sessionTimeoutMs(sessionTimeoutMs)
                .retryPolicy(new RetryNTimes(3, 100)));
  }

  /** Records every state the lock's holds hear, and when each state was first heard. */
  private static void record(
      ReentrantMutex lock, List<LockState> states, Map<LockState, Long> firstSeen) {
    lock.getStateListenable()
        .addListener(
            (LockStateChange change) -> {
              states.add(change.state());
              firstSeen.putIfAbsent(change.state(), System.nanoTime());
            });
  }
}
