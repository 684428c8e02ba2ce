package io.lockstep.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The rest of docs/testing.md's fault table, a test per cell: a server restart on a hold of every
 * kind, and a disconnect longer than the session and a silence on a {@code ReentrantMutex} hold;
 * then what the extension promises beside the faults: a fault stays on its client, the leftover
 * check finds what a test left, the shared link serves an application's own client, bad input is
 * refused. {@link LockFaultsTest} has the first rows.
 */
@Timeout(120)
class LinkAndServerFaultsTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  @AfterEach
  void leaveElections() {
    HoldKind.leaveElections();
  }

  @ParameterizedTest
  @EnumSource(HoldKind.class)
  void aServerRestart_putsTheHoldAtRisk_thenItIsHeldAgain(HoldKind kind) throws Exception {
    LockHold hold = kind.hold(zk.newClient(), zk.path("lock"));
    List<LockState> seen = new CopyOnWriteArrayList<>();
    Thread watcher = watch(hold, seen);

    zk.faults().restartServers();

    await().atMost(Duration.ofSeconds(20)).until(() -> seen.contains(LockState.AT_RISK));
    await().atMost(Duration.ofSeconds(20)).until(() -> hold.state() == LockState.HELD);
    watcher.interrupt();
    hold.checkHeld();
    hold.close();
  }

  @Test
  void aDisconnectLongerThanTheSession_makesTheHoldLost() throws Exception {
    CuratorFramework client =
        zk.newClient(builder -> builder.sessionTimeoutMs(3_000).connectionTimeoutMs(1_000));
    LockHold hold = HoldKind.REENTRANT_MUTEX.hold(client, zk.path("lock"));

    zk.faults().disconnect(client, Duration.ofSeconds(6));

    await().until(() -> hold.state() == LockState.AT_RISK);
    assertThat(hold.whenLost().toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    hold.close();
  }

  @Test
  void silence_isNoticedOnlyByTheClientsOwnTimeouts_thenLostPastTheSession() throws Exception {
    CuratorFramework client =
        zk.newClient(builder -> builder.sessionTimeoutMs(3_000).connectionTimeoutMs(1_000));
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    LockHold hold = HoldKind.REENTRANT_MUTEX.hold(client, zk.path("lock"));

    zk.faults().silence(client, Duration.ofSeconds(6));

    assertThat(states)
        .as("nothing reset: nothing noticed at once")
        .doesNotContain(ConnectionState.SUSPENDED, ConnectionState.LOST);
    await().atMost(Duration.ofSeconds(10)).until(() -> states.contains(ConnectionState.SUSPENDED));
    assertThat(hold.whenLost().toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    hold.close();
  }

  @Test
  void aFaultOnOneClient_leavesTheOthersConnected() throws Exception {
    CuratorFramework victim = zk.newClient();
    CuratorFramework bystander = zk.newClient();
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    bystander.getConnectionStateListenable().addListener((c, state) -> states.add(state));

    try (Fault fault = zk.faults().disconnect(victim, Duration.ofMinutes(1))) {
      await().until(() -> !victim.getZookeeperClient().isConnected());
      assertThat(bystander.getZookeeperClient().isConnected()).isTrue();
      assertThat(fault.isHealed()).isFalse();
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> victim.getZookeeperClient().isConnected());
    assertThat(states).doesNotContain(ConnectionState.SUSPENDED, ConnectionState.LOST);
  }

  @Test
  void theLeftoverCheck_findsAnEphemeralNodeOfTheTestsClients() throws Exception {
    CuratorFramework client = zk.newClient();
    String node = zk.path("left-behind");
    client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(node);

    zk.leftoverPatience = Duration.ofMillis(500); // the node stays: waiting 10 s proves nothing
    try {
      assertThatThrownBy(zk::assertNothingLeft)
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining(node);
    } finally {
      zk.leftoverPatience = Leftovers.PATIENCE;
    }
    client.delete().forPath(node);
    zk.assertNothingLeft();
  }

  @Test
  void theSharedLink_isForAnApplication_andItsClientCanBeFaulted() throws Exception {
    assertThat(zk.springProperties())
        .containsEntry("lockstep.zookeeper.connect-string", zk.connectString());
    CuratorFramework app =
        org.apache.curator.framework.CuratorFrameworkFactory.newClient(
            zk.connectString(), new org.apache.curator.retry.RetryOneTime(100));
    app.start();
    try {
      assertThat(app.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
      LockHold hold = new ReentrantMutex(app, zk.path("app-lock")).hold();
      zk.faults().expireSessionOf(hold);
      assertThat(hold.whenLost().toCompletableFuture().get(20, TimeUnit.SECONDS)).isNotNull();
      hold.close();
      try (Fault fault = zk.faults().disconnect(app, Duration.ofSeconds(30))) {
        await().until(() -> !app.getZookeeperClient().isConnected());
      }
      await().atMost(Duration.ofSeconds(20)).until(() -> app.getZookeeperClient().isConnected());
    } finally {
      app.close();
    }
  }

  @Test
  void badInput_isRefused_namingTheArgument() {
    CuratorFramework client = zk.newClient();
    assertThatThrownBy(() -> zk.faults().disconnect(client, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("length");
    assertThatThrownBy(() -> zk.faults().expireSession(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> LockstepZooKeeper.ensemble(2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("servers");
    CuratorFramework stranger =
        org.apache.curator.framework.CuratorFrameworkFactory.newClient(
            "127.0.0.1:1", new org.apache.curator.retry.RetryOneTime(100));
    assertThatThrownBy(() -> zk.faults().silence(stranger, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** Records every state the hold passes through, sampled until interrupted. */
  private static Thread watch(LockHold hold, List<LockState> seen) {
    Thread thread =
        new Thread(
            () -> {
              LockState last = null;
              while (!Thread.currentThread().isInterrupted()) {
                LockState now = hold.state();
                if (now != last) {
                  seen.add(now);
                  last = now;
                }
                Thread.onSpinWait();
              }
            },
            "hold-state-sampler");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }
}
