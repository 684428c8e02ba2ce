package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code lockstep} health indicator on a real server: UP while connected, DOWN while the server
 * is down and UP again once it is back; the holds at risk while the connection is suspended, and
 * the holds lost by a session expiry until their holders let go.
 */
@Timeout(90)
class LockstepHealthIndicatorTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void up_whileConnected_down_whileTheServerIsDown_andAHoldIsAtRiskMeanwhile() throws Exception {
    zk.skipLeakCheck(); // this test's server is its own
    try (TestingServer server = new TestingServer(true)) {
      BootContexts.runner(server.getConnectString())
          .withPropertyValues("lockstep.zookeeper.session-timeout=60s")
          .run(
              context -> {
                LockstepHealthIndicator health = context.getBean(LockstepHealthIndicator.class);
                CuratorFramework client = context.getBean(CuratorFramework.class);
                await("UP once connected").until(() -> status(health) == Status.UP);
                long session = client.getZookeeperClient().getZooKeeper().getSessionId();
                assertThat(health.health().getDetails())
                    .containsEntry("connectionState", "CONNECTED")
                    .containsEntry("connectString", server.getConnectString())
                    .containsEntry("sessionId", "0x" + Long.toHexString(session))
                    .containsEntry("holdsAtRisk", 0L)
                    .containsEntry("holdsLost", 0L);

                LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
                List<LockState> states = new CopyOnWriteArrayList<>();
                lock.fencedLock().getStateListenable().addListener(c -> states.add(c.state()));
                lock.lock();
                try {
                  server.stop();
                  await("DOWN while the server is down").until(() -> status(health) == Status.DOWN);
                  await("the hold is at risk")
                      .untilAsserted(
                          () ->
                              assertThat(health.health().getDetails())
                                  .containsEntry("connectionState", "SUSPENDED")
                                  .containsEntry("holdsAtRisk", 1L)
                                  .doesNotContainKey("sessionId"));

                  server.restart();
                  await("UP again, the same session")
                      .atMost(Duration.ofSeconds(30))
                      .until(() -> status(health) == Status.UP);
                  await("held again: no hold at risk")
                      .untilAsserted(
                          () ->
                              assertThat(health.health().getDetails())
                                  .containsEntry("connectionState", "RECONNECTED")
                                  .containsEntry("holdsAtRisk", 0L)
                                  .containsEntry("holdsLost", 0L));
                  assertThat(states).contains(LockState.AT_RISK).doesNotContain(LockState.LOST);
                } finally {
                  lock.unlock();
                }
              });
    }
  }

  @Test
  void aHoldLostToASessionExpiry_countsAsLost_untilItsHolderLetsGo() throws Exception {
    BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"))
        .run(
            context -> {
              LockstepHealthIndicator health = context.getBean(LockstepHealthIndicator.class);
              CuratorFramework client = context.getBean(CuratorFramework.class);
              await().until(() -> status(health) == Status.UP);
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              try {
                Sessions.expire(client, zk.server().getConnectString());
                await("the hold is lost, and the client is connected in a new session")
                    .atMost(Duration.ofSeconds(30))
                    .untilAsserted(
                        () -> {
                          Health now = health.health();
                          assertThat(now.getStatus()).isEqualTo(Status.UP);
                          assertThat(now.getDetails()).containsEntry("holdsLost", 1L);
                        });
              } finally {
                lock.unlock(); // clears the lost hold without throwing
              }
              assertThat(health.health().getDetails()).containsEntry("holdsLost", 0L);
            });
  }

  @Test
  void down_whenZooKeeperWasNeverReached_andClosedOnceTheClientIs() {
    BootContexts.runner("127.0.0.1:1")
        .run(
            context -> {
              LockstepHealthIndicator health = context.getBean(LockstepHealthIndicator.class);
              assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.health().getDetails())
                  .containsEntry("connectionState", "CONNECTING")
                  .doesNotContainKey("sessionId");
              context.getBean(CuratorFramework.class).close();
              assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.health().getDetails()).containsEntry("connectionState", "CLOSED");
            });
  }

  /** Curator says LOST when a first connection has not come within the session timeout. */
  @Test
  void connecting_evenAfterCuratorReportsLost_whenZooKeeperWasNeverReached() {
    BootContexts.runner("127.0.0.1:1")
        .withPropertyValues(
            "lockstep.zookeeper.session-timeout=2s", "lockstep.zookeeper.connection-timeout=1s")
        .run(
            context -> {
              CuratorFramework client = context.getBean(CuratorFramework.class);
              java.util.List<ConnectionState> heard =
                  new java.util.concurrent.CopyOnWriteArrayList<>();
              client.getConnectionStateListenable().addListener((c, state) -> heard.add(state));
              LockstepHealthIndicator health = context.getBean(LockstepHealthIndicator.class);

              await()
                  .atMost(Duration.ofSeconds(20))
                  .until(() -> heard.contains(ConnectionState.LOST));

              assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.health().getDetails())
                  .containsEntry("connectionState", "CONNECTING");
            });
  }

  private static Status status(LockstepHealthIndicator health) {
    return health.health().getStatus();
  }
}
