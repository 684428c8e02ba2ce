package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32, defect 3: the client ends its session on its own (as Curator's connection manager does
 * after a long SUSPENDED, and {@code KillSession}-style tests do) while our create is in flight.
 * The server applied the create and keeps the old session, and with it our node at the head of the
 * queue, until its own timeout (30 s here). The engine must find that node by its protection id and
 * delete it, so that the queue moves long before the server ends the old session.
 */
@Timeout(90)
class ExpiredCreateTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Well under the old session's 30 s: the queue must not wait for the server to end it. */
  private static final Duration BOUND = Duration.ofSeconds(10);

  private CuratorFramework clientThroughProxy() {
    return zk.newClient(
        b -> b.connectString(zk.proxy().connectString()).retryPolicy(new RetryNTimes(100, 100)));
  }

  /** Loses the answer of the client's next request, the create, and waits until it is applied. */
  private String createAppliedButUnanswered(CuratorFramework admin, String path) throws Exception {
    assertThat(zk.proxy().awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
    await().until(() -> admin.getChildren().forPath(path).size() == 1);
    return admin.getChildren().forPath(path).get(0);
  }

  private static void expireOnTheClientSide(CuratorFramework client) throws Exception {
    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
  }

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void createInFlight_whenTheClientExpiresItsSession_theOldSessionsNodeIsDeleted_andWeHold(
      MutexKind kind) throws Exception {
    CuratorFramework admin = zk.newClient();
    String path = zk.path("lock");
    admin.create().creatingParentsIfNeeded().forPath(path);
    CuratorFramework client = clientThroughProxy();
    long oldSession = Sessions.id(client);
    FencedLock lock = kind.newLock(client, path);

    zk.proxy().loseNextResponse(60_000);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Boolean> acquired = thread.call(() -> lock.acquire(60, TimeUnit.SECONDS));
      String ghost = createAppliedButUnanswered(admin, path);
      expireOnTheClientSide(client);

      assertThat(acquired.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
      List<String> children = admin.getChildren().forPath(path);
      assertThat(children).hasSize(1).doesNotContain(ghost);
      Stat ours = admin.checkExists().forPath(path + "/" + children.get(0));
      assertThat(ours.getEphemeralOwner()).isNotEqualTo(oldSession).isEqualTo(Sessions.id(client));
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LeaderLayout.class)
  void participantClosedAfterItsCreateWasAnsweredSessionExpired_leavesNoNodeBehind(
      LeaderLayout layout) throws Exception {
    CuratorFramework admin = zk.newClient();
    String path = zk.path("election");
    admin.create().creatingParentsIfNeeded().forPath(path);
    CuratorFramework client = clientThroughProxy();

    zk.proxy().loseNextResponse(60_000);
    LeaderElection first =
        LeaderElection.builder(client, path).participantId("first").layout(layout).build();
    first.start();
    String ghost = createAppliedButUnanswered(admin, path);
    expireOnTheClientSide(client);
    first.close();

    LeaderElection second =
        LeaderElection.builder(zk.newClient(), path).participantId("second").layout(layout).build();
    try {
      second.start();
      assertThat(second.awaitLeadership(BOUND)).as("the next participant leads").isPresent();
      assertThat(admin.getChildren().forPath(path)).doesNotContain(ghost).hasSize(1);
    } finally {
      second.close();
    }
  }

  @Test
  void waiterWhoseCreateWasAnsweredSessionExpired_doesNotBlockTheQueueBehindItsOldNode()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    String path = zk.path("lock");
    admin.create().creatingParentsIfNeeded().forPath(path);
    FencedLock holder = MutexKind.REENTRANT_MUTEX.newLock(zk.newClient(), path);
    FencedLock other = MutexKind.REENTRANT_MUTEX.newLock(zk.newClient(), path);
    CuratorFramework expiringClient = clientThroughProxy();
    long oldSession = Sessions.id(expiringClient);
    FencedLock expiring = MutexKind.REENTRANT_MUTEX.newLock(expiringClient, path);
    holder.acquire();

    zk.proxy().loseNextResponse(60_000);
    try (LockThread expiringThread = new LockThread("expiring");
        LockThread otherThread = new LockThread("other")) {
      CompletableFuture<Boolean> expiringAcquire =
          expiringThread.call(() -> expiring.acquire(60, TimeUnit.SECONDS));
      assertThat(zk.proxy().awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
      await().until(() -> admin.getChildren().forPath(path).size() == 2);
      CompletableFuture<Boolean> otherAcquire =
          otherThread.call(() -> other.acquire(60, TimeUnit.SECONDS));
      await().until(() -> admin.getChildren().forPath(path).size() == 3);
      expireOnTheClientSide(expiringClient);
      await("the old session's node replaced by a new one behind the other waiter")
          .atMost(BOUND)
          .until(
              () -> {
                List<Long> owners = ownersOf(admin, path);
                return owners.size() == 3 && !owners.contains(oldSession);
              });
      assertThat(expiringAcquire).isNotDone();

      holder.release();
      assertThat(otherAcquire.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
      otherThread.run(other::release).get(10, TimeUnit.SECONDS);
      assertThat(expiringAcquire.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
      expiringThread.run(expiring::release).get(10, TimeUnit.SECONDS);
    }
  }

  private static List<Long> ownersOf(CuratorFramework admin, String path) throws Exception {
    List<Long> owners = new java.util.ArrayList<>();
    for (String child : admin.getChildren().forPath(path)) {
      Stat stat = admin.checkExists().forPath(path + "/" + child);
      if (stat != null) {
        owners.add(stat.getEphemeralOwner());
      }
    }
    return owners;
  }
}
