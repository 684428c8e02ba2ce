package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.testing.LockThread;
import io.lockstep.testkit.internal.ServerStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Losing the server a client is connected to, in a three-server ensemble. */
@Timeout(120)
class ClusterFailoverTest {
  static {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
  }

  private TestingCluster cluster;
  private final List<CuratorFramework> clients = new ArrayList<>();

  @BeforeEach
  void startCluster() throws Exception {
    cluster = new TestingCluster(3);
    cluster.start();
  }

  @AfterEach
  void stopCluster() {
    clients.forEach(CloseableUtils::closeQuietly);
    CloseableUtils.closeQuietly(cluster);
  }

  private CuratorFramework newClient() throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(cluster.getConnectString())
            .sessionTimeoutMs(20_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(200, 10))
            .build();
    client.start();
    assertThat(client.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
    clients.add(client);
    return client;
  }

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void holdersServerDies_holderKeepsTheLock_andNobodyElseGetsIt(MutexKind kind) throws Exception {
    CuratorFramework holderClient = newClient();
    FencedLock holder = kind.newLock(holderClient, "/locks/failover");
    FencedLock waiter = kind.newLock(newClient(), "/locks/failover");
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    long token = holder.fencingToken();
    InstanceSpec connected =
        cluster.findConnectionInstance(holderClient.getZookeeperClient().getZooKeeper());

    cluster.killServer(connected);

    await().atMost(Duration.ofSeconds(40)).until(() -> states.size() >= 3);
    assertThat(states).containsExactly(LockState.HELD, LockState.AT_RISK, LockState.HELD);
    holder.checkHeld();
    assertThat(holder.fencingToken()).isEqualTo(token);
    try {
      assertThat(waiter.acquire(500, TimeUnit.MILLISECONDS)).as("busy").isFalse();
    } catch (LockUnreachableException e) {
      // the waiter's client was on the dead server too, and still on its way to another: not held
      assertThat(waiter.isAcquiredInThisProcess()).isFalse();
    }

    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      holder.release();
      waiting.get(20, TimeUnit.SECONDS);
      assertThat(thread.call(waiter::fencingToken).get()).isGreaterThan(token);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
    cluster.restartServer(connected);
    for (InstanceSpec instance : cluster.getInstances()) {
      ServerStats stats = new ServerStats("127.0.0.1", instance.getPort());
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(stats.ephemeralNodes()).isEmpty());
    }
  }
}
