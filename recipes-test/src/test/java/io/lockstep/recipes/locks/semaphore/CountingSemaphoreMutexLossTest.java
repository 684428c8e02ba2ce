package io.lockstep.recipes.locks.semaphore;

import static io.lockstep.testing.ZooKeeperExtension.childrenOrNone;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A request that loses its {@code locks} mutex while a lease waits under it (the mutex node deleted
 * by an operator, its session expired), after some of its leases were granted: it gives those back
 * and its waiting lease up, takes the mutex again, and is granted later with leases that are all
 * held, its old nodes gone. The extension checks after every test that no lease node, no mutex node
 * and no watch is left.
 */
@Timeout(60)
class CountingSemaphoreMutexLossTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private CuratorFramework observer;

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  private List<String> locks() throws Exception {
    return childrenOrNone(observer, zk.path("sem/locks"));
  }

  private List<String> leases() throws Exception {
    return childrenOrNone(observer, zk.path("sem/leases"));
  }

  /** Another client's two leases of three. */
  private List<LockHold> held;

  /** A request for two leases through {@code client}, waiting under the mutex; its nodes. */
  private CompletableFuture<List<LockHold>> request;

  private List<String> requestNodes;

  private void waitUnderTheMutex(CuratorFramework client) throws Exception {
    observer = zk.newClient();
    held =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 3).tryHold(2, Duration.ofSeconds(5));
    List<String> holders = leases();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 3);
    request =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return semaphore.tryHold(2, Duration.ofSeconds(40));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    requestNodes = underTheMutex(holders, List.of());
  }

  /**
   * Waits until the request holds a mutex other than {@code oldNodes}' with one lease granted and
   * one waiting, none of them among {@code oldNodes}; returns the nodes of the request.
   */
  private List<String> underTheMutex(List<String> holders, List<String> oldNodes) {
    List<String> nodes = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              List<String> locks = locks();
              List<String> leases = new ArrayList<>(leases());
              assertThat(locks).hasSize(1).noneMatch(oldNodes::contains);
              assertThat(leases).hasSize(4).containsAll(holders);
              leases.removeAll(holders);
              assertThat(leases).noneMatch(oldNodes::contains);
              nodes.clear();
              nodes.addAll(locks);
              nodes.addAll(leases);
            });
    return nodes;
  }

  /** The holder lets one lease go: the request is granted both, held, and leaves nothing. */
  private void grantedLater() throws Exception {
    assertThat(request).isNotDone();
    held.get(0).close();
    List<LockHold> granted = request.get(20, TimeUnit.SECONDS);
    assertThat(granted).hasSize(2).extracting(LockHold::state).containsOnly(LockState.HELD);
    granted.forEach(LockHold::checkHeld);
    assertThat(locks()).isEmpty();
    assertThat(leases()).hasSize(3);
    granted.forEach(LockHold::close);
    held.get(1).close();
    assertThat(leases()).isEmpty();
  }

  @Test
  void theMutexNodeDeleted_whileALeaseWaits_afterOneWasGranted_startsAgain_andIsGrantedBoth()
      throws Exception {
    waitUnderTheMutex(zk.newClient());
    List<String> holders = new ArrayList<>(leases());
    holders.removeAll(requestNodes);
    observer.delete().forPath(zk.path("sem/locks/" + locks().get(0)));
    // the granted lease given back, the waiting one withdrawn, the mutex taken again
    underTheMutex(holders, requestNodes);
    grantedLater();
  }

  @Test
  void theSessionExpired_whileALeaseWaits_afterOneWasGranted_startsAgain_andIsGrantedBoth()
      throws Exception {
    CuratorFramework client = zk.newClient();
    waitUnderTheMutex(client);
    List<String> holders = new ArrayList<>(leases());
    holders.removeAll(requestNodes);
    long expired = Sessions.expire(client, zk.server().getConnectString());
    await().atMost(Duration.ofSeconds(20)).until(() -> Sessions.id(client) != expired);
    underTheMutex(holders, requestNodes);
    grantedLater();
  }

  /**
   * The race itself: one transaction deletes the request's mutex node and one of the holder's lease
   * nodes, so the waiting lease's grant and the mutex's loss come from one change, heard in either
   * order. Either the request keeps its grant (and gives the lost mutex back) or gives its leases
   * back and takes the mutex again; both end granted, held, with nothing left.
   */
  @RepeatedTest(8)
  void theMutexNodeDeletedWithTheChangeThatGrantsTheLease_isGrantedEitherWay() throws Exception {
    waitUnderTheMutex(zk.newClient());
    List<String> holders = new ArrayList<>(leases());
    holders.removeAll(requestNodes);
    var unused =
        observer
            .transaction()
            .forOperations(
                observer.transactionOp().delete().forPath(zk.path("sem/locks/" + locks().get(0))),
                observer.transactionOp().delete().forPath(zk.path("sem/leases/" + holders.get(0))));
    List<LockHold> granted = request.get(20, TimeUnit.SECONDS);
    assertThat(granted).hasSize(2).extracting(LockHold::state).containsOnly(LockState.HELD);
    await().atMost(Duration.ofSeconds(5)).until(() -> locks().isEmpty());
    assertThat(leases()).hasSize(3);
    granted.forEach(LockHold::close);
    held.forEach(LockHold::close); // one of them lost: cleared
    assertThat(leases()).isEmpty();
  }
}
