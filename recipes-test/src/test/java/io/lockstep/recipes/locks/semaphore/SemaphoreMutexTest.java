package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.SemaphoreMutex;
import io.lockstep.testing.Hammer;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link SemaphoreMutex} on the nodes of Curator's {@code InterProcessSemaphoreMutex}: old and new
 * instances on one path exclude each other both ways and hand the lock to each other, and the new
 * one keeps every lock's promises (fencing, loss, ownership checks, nothing left behind).
 */
@Timeout(90)
class SemaphoreMutexTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private CuratorFramework reader;

  @BeforeEach
  void newReader() {
    reader = zk.newClient();
  }

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  @Test
  void holdersNode_isALeaseInCuratorsLayout() throws Exception {
    CuratorFramework client = zk.newClient();
    SemaphoreMutex lock = new SemaphoreMutex(client, zk.path("lock"));
    lock.acquire();

    assertThat(client.getChildren().forPath(zk.path("lock/leases")))
        .singleElement()
        .asString()
        .matches("_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lease-\\d{10}");
    assertThat(lock.getParticipantNodes())
        .singleElement()
        .asString()
        .startsWith(zk.path("lock/leases/_c_"));
    assertThat(lock).hasToString("SemaphoreMutex[" + zk.path("lock/leases") + "]");
    lock.release();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void curatorsSemaphoreMutex_andOurs_excludeEachOther_inBothDirections() throws Exception {
    String path = zk.path("lock");
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    SemaphoreMutex ours = new SemaphoreMutex(zk.newClient(), path);

    curator.acquire();
    assertThat(ours.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(ours.tryHold(Duration.ZERO)).isEmpty();
    curator.release();

    ours.acquire();
    assertThat(curator.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    ours.release();
    assertThat(curator.acquire(5, TimeUnit.SECONDS)).isTrue();
    curator.release();
  }

  @Test
  void waiters_ofEitherKind_areHandedTheLock_whenTheOtherKindReleases() throws Exception {
    String path = zk.path("lock");
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    SemaphoreMutex ours = new SemaphoreMutex(zk.newClient(), path);
    try (LockThread thread = new LockThread("waiter")) {
      curator.acquire();
      CompletableFuture<Void> oursWaiting = thread.run(ours::acquire);
      await().until(() -> childrenOrNone(path + "/locks").size() == 1);
      assertThat(oursWaiting).isNotDone();
      curator.release();
      oursWaiting.get(10, TimeUnit.SECONDS);

      CompletableFuture<Void> curatorWaiting = thread.run(curator::acquire);
      await().until(() -> childrenOrNone(path + "/locks").size() == 1);
      assertThat(curatorWaiting).isNotDone();
      ours.release();
      curatorWaiting.get(10, TimeUnit.SECONDS);
      thread.run(curator::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(childrenOrNone(path + "/leases")).isEmpty();
  }

  @Test
  void mixedFleet_underContention_neverHasTwoHolders() throws Exception {
    List<InterProcessLock> locks = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      locks.add(new InterProcessSemaphoreMutex(zk.newClient(), zk.path("lock")));
      locks.add(new SemaphoreMutex(zk.newClient(), zk.path("lock")));
    }

    Hammer.Result result = Hammer.run(locks, 10, 60);

    assertThat(result.entries()).isEqualTo(6 * 10);
    assertThat(result.mostInsideAtOnce()).isEqualTo(1);
  }

  @Test
  void fencingToken_increases_acrossHoldersAndCuratorHoldsBetween() throws Exception {
    String path = zk.path("lock");
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    List<SemaphoreMutex> ours =
        List.of(new SemaphoreMutex(zk.newClient(), path), new SemaphoreMutex(zk.newClient(), path));
    long previous = 0;
    for (int round = 0; round < 3; round++) {
      for (SemaphoreMutex lock : ours) {
        lock.acquire();
        long token = lock.fencingToken();
        lock.release();
        assertThat(token).isGreaterThan(previous);
        previous = token;
        curator.acquire();
        curator.release();
      }
    }
  }

  @Test
  void ownershipCheck_letsATransactionCommitOnlyWhileHeld() throws Exception {
    CuratorFramework client = zk.newClient();
    SemaphoreMutex lock = new SemaphoreMutex(client, zk.path("lock"));
    client.create().creatingParentsIfNeeded().forPath(zk.path("data"), new byte[] {0});

    lock.acquire();
    client
        .transaction()
        .forOperations(
            lock.ownershipCheck(),
            client.transactionOp().setData().forPath(zk.path("data"), new byte[] {1}));
    List<CuratorOp> stale = new ArrayList<>(lock.ownershipChecks());
    stale.add(client.transactionOp().setData().forPath(zk.path("data"), new byte[] {2}));
    lock.release();

    assertThatThrownBy(() -> client.transaction().forOperations(stale))
        .isInstanceOf(KeeperException.NoNodeException.class);
    assertThat(client.getData().forPath(zk.path("data"))).containsExactly(1);
    assertThatThrownBy(lock::ownershipCheck).isInstanceOf(IllegalMonitorStateException.class);
  }

  @Test
  void stateListener_hearsHeldThenReleased_withTheToken() throws Exception {
    SemaphoreMutex lock = new SemaphoreMutex(zk.newClient(), zk.path("lock"));
    List<LockStateChange> changes = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(changes::add);

    lock.acquire();
    long token = lock.fencingToken();
    lock.release();

    await()
        .untilAsserted(
            () ->
                assertThat(changes)
                    .extracting(LockStateChange::state)
                    .containsExactly(LockState.HELD, LockState.RELEASED));
    assertThat(changes).allSatisfy(change -> assertThat(change.fencingToken()).isEqualTo(token));
  }

  @Test
  void expiredSession_losesTheHold_andCuratorsWaiterTakesTheLock() throws Exception {
    String path = zk.path("lock");
    CuratorFramework client = zk.newClient();
    SemaphoreMutex lock = new SemaphoreMutex(client, path);
    List<LockState> heard = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> heard.add(change.state()));
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    lock.acquire();
    try (LockThread thread = new LockThread("curator")) {
      CompletableFuture<Boolean> curatorWaiting =
          thread.call(() -> curator.acquire(30, TimeUnit.SECONDS));
      await().until(() -> childrenOrNone(path + "/locks").size() == 1);

      Sessions.expire(client, zk.server().getConnectString());

      assertThat(curatorWaiting.get(20, TimeUnit.SECONDS)).isTrue();
      await().until(() -> heard.contains(LockState.LOST));
      assertThatThrownBy(lock::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      assertThatThrownBy(lock::fencingToken).isInstanceOf(LockOwnershipLostException.class);
      lock.release(); // clears a lost hold without throwing
      assertThat(lock.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
      thread.run(curator::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    lock.release();
  }

  @Test
  void serverRestart_keepsTheHoldAndTheExclusion_thenCuratorsWaiterIsGranted() throws Exception {
    String path = zk.path("lock");
    SemaphoreMutex ours = new SemaphoreMutex(zk.newClient(), path);
    List<LockState> heard = new CopyOnWriteArrayList<>();
    ours.getStateListenable().addListener(change -> heard.add(change.state()));
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    ours.acquire();
    try (LockThread thread = new LockThread("curator")) {
      CompletableFuture<Boolean> curatorWaiting =
          thread.call(() -> curator.acquire(60, TimeUnit.SECONDS));
      await().until(() -> childrenOrNone(path + "/locks").size() == 1);

      zk.server().restart();

      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> heard.equals(List.of(LockState.HELD, LockState.AT_RISK, LockState.HELD)));
      ours.checkHeld();
      assertThat(curatorWaiting).isNotDone();
      ours.release();
      assertThat(curatorWaiting.get(20, TimeUnit.SECONDS)).isTrue();
      assertThat(ours.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
      thread.run(curator::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(ours.acquire(10, TimeUnit.SECONDS)).isTrue();
    ours.release();
  }

  @Test
  void uncontendedCycle_costsThreeRequests() throws Exception {
    CuratorFramework client = zk.newClient();
    SemaphoreMutex lock = new SemaphoreMutex(client, zk.path("lock"));
    // persistent directories: the container reaper must not remove them between cycles
    client.create().creatingParentsIfNeeded().forPath(zk.path("lock/leases"));
    client.create().creatingParentsIfNeeded().forPath(zk.path("lock/locks"));

    long before = zk.requestsSoFar(client);
    lock.acquire();
    lock.release();
    long after = zk.requestsSoFar(client);

    assertThat(after - before).isEqualTo(3);
  }

  @Test
  void theObjectOwnsItsHold_anyThreadReleases_andItsHolderMayNotWaitForItself() throws Exception {
    SemaphoreMutex lock = new SemaphoreMutex(zk.newClient(), zk.path("lock"));
    lock.acquire();
    assertThatThrownBy(lock::acquire).isInstanceOf(IllegalMonitorStateException.class);
    assertThat(lock.acquire(100, TimeUnit.MILLISECONDS)).isFalse();
    try (LockThread thread = new LockThread("other")) {
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThatThrownBy(lock::release).isInstanceOf(IllegalMonitorStateException.class);
  }

  @Test
  void handles_areHoldsOfTheirOwn_besideTheObjectsHold() throws Exception {
    SemaphoreMutex lock = new SemaphoreMutex(zk.newClient(), zk.path("lock"));
    SemaphoreMutex other = new SemaphoreMutex(zk.newClient(), zk.path("lock"));
    LockHold hold = lock.hold();
    assertThat(lock.isAcquiredInThisProcess()).isTrue();
    assertThat(other.tryHold(Duration.ofMillis(200))).isEmpty();
    CompletionStage<LockHold> waiting = other.acquireAsync(Duration.ofSeconds(20));
    hold.close();
    try (LockHold next = waiting.toCompletableFuture().get(10, TimeUnit.SECONDS)) {
      assertThat(next.fencingToken()).isGreaterThan(0);
      assertThat(next.state()).isEqualTo(LockState.HELD);
      assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    }
    assertThat(lock.asLock().tryLock(10, TimeUnit.SECONDS)).isTrue();
    lock.asLock().unlock();
  }

  @Test
  void close_withdrawsWaiters_leavingNoNode_andRefusesNewAcquires() throws Exception {
    String path = zk.path("lock");
    InterProcessSemaphoreMutex curator = new InterProcessSemaphoreMutex(zk.newClient(), path);
    SemaphoreMutex lock = new SemaphoreMutex(zk.newClient(), path);
    curator.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(lock::acquire);
      await().until(() -> childrenOrNone(path + "/locks").size() == 1);

      lock.close();

      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class);
    }
    await().until(() -> childrenOrNone(path + "/locks").isEmpty());
    assertThatThrownBy(lock::acquire).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(lock::hold).isInstanceOf(IllegalStateException.class);
    curator.release();
    assertThat(childrenOrNone(path + "/leases")).isEmpty();
  }

  @Test
  void badInput_isRefused_namingTheArgument() {
    CuratorFramework client = zk.newClient();
    assertThatThrownBy(() -> new SemaphoreMutex(null, "/a"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> new SemaphoreMutex(client, "no-slash"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("path");
    FencedLock lock = SemaphoreMutex.builder(client, zk.path("lock")).build();
    assertThatThrownBy(() -> lock.acquire(-1, TimeUnit.SECONDS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("time");
    assertThatThrownBy(() -> lock.tryHold(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
  }

  private List<String> childrenOrNone(String path) throws Exception {
    return ZooKeeperExtension.childrenOrNone(reader, path);
  }
}
