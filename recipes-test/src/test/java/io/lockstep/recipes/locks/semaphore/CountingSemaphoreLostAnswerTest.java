package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fast path's create reaches the server but its answer is lost (a TCP proxy drops it): the
 * engine's protected-mode recovery finds the lease node by its protection id, so the request ends
 * with exactly one lease node of its own, granted or given back, never a duplicate.
 */
@Timeout(90)
class CountingSemaphoreLostAnswerTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private TcpProxy proxy;

  @BeforeEach
  void startProxy() {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
  }

  @AfterEach
  void stopProxy() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  private CuratorFramework clientThroughProxy() {
    return zk.newClient(
        b -> b.connectString(proxy.connectString()).retryPolicy(new RetryNTimes(100, 100)));
  }

  @Test
  void lostCreateAnswer_onAFreeLease_adoptsTheNode_withoutADuplicate() throws Exception {
    CuratorFramework admin = zk.newClient();
    admin.create().creatingParentsIfNeeded().forPath(zk.path("sem/leases"));
    CuratorFramework client = clientThroughProxy();
    long session = Sessions.id(client);
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 2);

    proxy.loseNextResponse(200);
    CompletableFuture<Optional<LockHold>> acquired =
        CompletableFuture.supplyAsync(() -> tryAcquire(semaphore, Duration.ofSeconds(30)));
    assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();

    LockHold lease = acquired.get(30, TimeUnit.SECONDS).orElseThrow();
    List<String> children = admin.getChildren().forPath(zk.path("sem/leases"));
    assertThat(children).hasSize(1);
    Stat stat = admin.checkExists().forPath(zk.path("sem/leases") + "/" + children.get(0));
    assertThat(stat.getEphemeralOwner()).isEqualTo(session);
    assertThat(lease.fencingToken()).isGreaterThanOrEqualTo(stat.getCzxid());
    assertThat(admin.checkExists().forPath(zk.path("sem/locks"))).isNull(); // never queued
    lease.close();
    assertThat(admin.getChildren().forPath(zk.path("sem/leases"))).isEmpty();
  }

  @Test
  void lostCreateAnswer_whenNoLeaseIsFree_leavesOneWaitingNode_andIsGrantedLater()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    admin.create().creatingParentsIfNeeded().forPath(zk.path("sem/leases"));
    LockHold held = new CountingSemaphore(admin, zk.path("sem"), 1).acquire();
    CuratorFramework client = clientThroughProxy();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);

    proxy.loseNextResponse(200);
    CompletableFuture<Optional<LockHold>> acquired =
        CompletableFuture.supplyAsync(() -> tryAcquire(semaphore, Duration.ofSeconds(40)));
    assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
    // recovered, gave the fast try's node back, and waits holding the mutex with one lease node
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                CountingSemaphoreTest.children(admin, zk.path("sem/leases")) == 2
                    && CountingSemaphoreTest.children(admin, zk.path("sem/locks")) == 1);
    assertThat(acquired).isNotDone();
    held.close();
    LockHold lease = acquired.get(20, TimeUnit.SECONDS).orElseThrow();
    assertThat(admin.getChildren().forPath(zk.path("sem/leases"))).hasSize(1);
    lease.close();
  }

  private static Optional<LockHold> tryAcquire(CountingSemaphore semaphore, Duration budget) {
    try {
      return semaphore.tryHold(budget);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
