package io.lockstep.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.locks.SemaphoreMutex;
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
 * Every fault of the kit on a hold of every kind of recipe, against the embedded server: the table
 * of docs/testing.md, a test per cell.
 */
@Timeout(120)
class LockFaultsTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  private static final List<LeaderElection> elections = new CopyOnWriteArrayList<>();

  @AfterEach
  void leaveElections() {
    elections.forEach(LeaderElection::close);
    elections.clear();
  }

  /** A hold of each kind of recipe, on a client of the extension. */
  enum Kind {
    REENTRANT_MUTEX {
      @Override
      LockHold hold(CuratorFramework client, String path) throws Exception {
        return new ReentrantMutex(client, path).hold();
      }
    },
    SEMAPHORE_MUTEX {
      @Override
      LockHold hold(CuratorFramework client, String path) throws Exception {
        return new SemaphoreMutex(client, path).hold();
      }
    },
    SEMAPHORE_LEASE {
      @Override
      LockHold hold(CuratorFramework client, String path) throws Exception {
        return new CountingSemaphore(client, path, 2).acquire();
      }
    },
    LEADERSHIP {
      @Override
      LockHold hold(CuratorFramework client, String path) throws Exception {
        LeaderElection election = LeaderElection.builder(client, path).build();
        elections.add(election); // left after the test, so that its node goes
        election.start();
        return election.hold();
      }
    };

    abstract LockHold hold(CuratorFramework client, String path) throws Exception;
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void expireSessionOf_makesTheHoldLost(Kind kind) throws Exception {
    LockHold hold = kind.hold(zk.newClient(), zk.path("lock"));

    zk.faults().expireSessionOf(hold);

    assertThat(hold.whenLost().toCompletableFuture().get(20, TimeUnit.SECONDS)).isNotNull();
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    assertThatThrownBy(hold::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void deleteNode_makesTheHoldLost(Kind kind) throws Exception {
    LockHold hold = kind.hold(zk.newClient(), zk.path("lock"));

    zk.faults().deleteNode(hold);

    assertThat(hold.whenLost().toCompletableFuture().get(20, TimeUnit.SECONDS)).isNotNull();
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aShortDisconnect_putsTheHoldAtRisk_thenItIsHeldAgain(Kind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    LockHold hold = kind.hold(client, zk.path("lock"));

    Fault fault = zk.faults().disconnect(client, Duration.ofSeconds(2));

    await().until(() -> hold.state() == LockState.AT_RISK);
    await().atMost(Duration.ofSeconds(20)).until(() -> hold.state() == LockState.HELD);
    assertThat(fault.isHealed()).isTrue();
    hold.checkHeld();
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aServerRestart_putsTheHoldAtRisk_thenItIsHeldAgain(Kind kind) throws Exception {
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
    LockHold hold = Kind.REENTRANT_MUTEX.hold(client, zk.path("lock"));

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
    LockHold hold = Kind.REENTRANT_MUTEX.hold(client, zk.path("lock"));

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
