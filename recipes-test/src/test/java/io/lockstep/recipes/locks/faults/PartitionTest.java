package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
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
    CuratorFramework holderClient =
        zk.newClient(
            b ->
                b.connectString(proxy.connectString())
                    .sessionTimeoutMs(4_000)
                    .retryPolicy(new RetryNTimes(3, 100)));
    ReentrantMutex holder = new ReentrantMutex(holderClient, zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder
        .getStateListenable()
        .addListener(
            (LockStateChange change) -> {
              states.add(change.state());
              firstSeen.putIfAbsent(change.state(), System.nanoTime());
            });
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
}
