package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.lockstep.testkit.internal.TcpProxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The create of our lock node reaches the server but its answer is lost. The engine must find the
 * node by its protection id and adopt it only if it belongs to the current session: never leave a
 * duplicate behind, never adopt a node of another session. Under local handoff the create is the
 * place's, which its first local contender started: the same duty, one node per client.
 */
@Timeout(90)
class CreateRecoveryTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private TcpProxy proxy;

  @BeforeEach
  void startProxy() {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
  }

  private CuratorFramework clientThroughProxy() {
    return zk.newClient(
        b -> b.connectString(proxy.connectString()).retryPolicy(new RetryNTimes(100, 100)));
  }

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void lostCreateAnswer_sameSession_adoptsTheNodeWithoutADuplicate(MutexKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    admin.create().creatingParentsIfNeeded().forPath(zk.path("lock"));
    CuratorFramework client = clientThroughProxy();
    long session = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    proxy.loseNextResponse(200);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Boolean> acquired = thread.call(() -> lock.acquire(30, TimeUnit.SECONDS));
      assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();

      assertThat(acquired.get(30, TimeUnit.SECONDS)).isTrue();
      List<String> children = admin.getChildren().forPath(zk.path("lock"));
      assertThat(children).hasSize(1);
      Stat stat = admin.checkExists().forPath(zk.path("lock") + "/" + children.get(0));
      assertThat(stat.getEphemeralOwner()).isEqualTo(session);
      assertThat(Sessions.id(client)).as("same session after reconnecting").isEqualTo(session);
      assertThat(thread.call(lock::fencingToken).get()).isEqualTo(stat.getCzxid());
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
    }
  }

  // MultiMutex has no local handoff: this case stays as it was.
  @Test
  void lostTransactionAnswer_multiLockAdoptsAllItsNodes_withoutDuplicates() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("a"), zk.path("b"), zk.path("c"));
    for (String path : paths) {
      admin.create().creatingParentsIfNeeded().forPath(path);
    }
    CuratorFramework client = clientThroughProxy();
    MultiMutex lock = new MultiMutex(client, paths);

    proxy.loseNextResponse(200);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Boolean> acquired = thread.call(() -> lock.acquire(30, TimeUnit.SECONDS));
      assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();

      assertThat(acquired.get(30, TimeUnit.SECONDS)).isTrue();
      long token = thread.call(lock::fencingToken).get();
      for (String path : paths) {
        List<String> children = admin.getChildren().forPath(path);
        assertThat(children).hasSize(1);
        assertThat(admin.checkExists().forPath(path + "/" + children.get(0)).getCzxid())
            .isEqualTo(token);
      }
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void lostCreateAnswer_thenSessionExpired_refusesTheStaleNodeAndEnqueuesAfresh(MutexKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    admin.create().creatingParentsIfNeeded().forPath(zk.path("lock"));
    CuratorFramework client = clientThroughProxy();
    long firstSession = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    proxy.loseNextResponse(60_000);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Boolean> acquired = thread.call(() -> lock.acquire(60, TimeUnit.SECONDS));
      assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
      await().until(() -> admin.getChildren().forPath(zk.path("lock")).size() == 1);
      String created = admin.getChildren().forPath(zk.path("lock")).get(0);
      proxy.cut();

      // The first session expires, and a node with our protection id now belongs to someone else:
      // what an abandoned session's node looks like to the recovering client.
      Sessions.expire(client, zk.server().getConnectString());
      await().until(() -> admin.getChildren().forPath(zk.path("lock")).isEmpty());
      admin.create().withMode(CreateMode.EPHEMERAL).forPath(zk.path("lock") + "/" + created);
      proxy.heal();

      assertThat(acquired.get(60, TimeUnit.SECONDS)).isTrue();
      List<String> children = admin.getChildren().forPath(zk.path("lock"));
      assertThat(children).hasSize(1).doesNotContain(created);
      Stat ours = admin.checkExists().forPath(zk.path("lock") + "/" + children.get(0));
      assertThat(ours.getEphemeralOwner())
          .isEqualTo(Sessions.id(client))
          .isNotEqualTo(firstSession);
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
    }
  }
}
