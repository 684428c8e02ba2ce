package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.Hammer;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The contract every exclusive lock keeps, run over every {@link LockKind}: mutual exclusion,
 * fencing, ownership checks, participants, state events and the request budget.
 */
@Timeout(60)
class LockContractTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquire_thenRelease_leavesNoNode(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    lock.acquire();
    assertThat(lock.isAcquiredInThisProcess()).isTrue();
    assertThat(lock.getParticipantNodes()).hasSize(kind.lockPaths(zk.path("lock")).size());
    lock.release();

    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquire_whileAnotherClientHolds_waitsForRelease(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    try (LockThread thread = new LockThread("waiter")) {
      holder.acquire();
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      int nodesPerHolder = kind.lockPaths(zk.path("lock")).size();
      await().until(() -> waiter.getParticipantNodes().size() == 2 * nodesPerHolder);
      assertThat(waiting).isNotDone();

      holder.release();

      waiting.get(10, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void contention_acrossClients_neverTwoHolders(LockKind kind) throws Exception {
    List<FencedLock> locks = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      locks.add(kind.newLock(zk.newClient(), zk.path("lock")));
    }

    Hammer.Result result = Hammer.run(locks, 15, 50);

    assertThat(result.entries()).isEqualTo(4 * 15);
    assertThat(result.mostInsideAtOnce()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void fencingToken_increasesAcrossSuccessiveHolders(LockKind kind) throws Exception {
    List<FencedLock> locks = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      locks.add(kind.newLock(zk.newClient(), zk.path("lock")));
    }
    long previous = 0;
    for (int round = 0; round < 2; round++) {
      for (FencedLock lock : locks) {
        lock.acquire();
        long token = lock.fencingToken();
        lock.release();
        assertThat(token).isGreaterThan(previous);
        previous = token;
      }
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void fencingToken_increasesAfterTheLockDirectoryIsRecreated(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    lock.acquire();
    long first = lock.fencingToken();
    String firstNode = lock.getParticipantNodes().iterator().next();
    lock.release();
    for (String path : kind.lockPaths(zk.path("lock"))) {
      client.delete().quietly().forPath(path); // what the container reaper does to an empty lock
    }

    lock.acquire();
    long second = lock.fencingToken();
    String secondNode = lock.getParticipantNodes().iterator().next();
    lock.release();

    assertThat(secondNode.substring(secondNode.length() - 10))
        .as("sequence numbers restart in a recreated directory")
        .isEqualTo(firstNode.substring(firstNode.length() - 10));
    assertThat(second).isGreaterThan(first);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void ownershipChecks_letATransactionCommitOnlyWhileHeld(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    client.create().creatingParentsIfNeeded().forPath(zk.path("data"), new byte[] {0});

    lock.acquire();
    List<CuratorOp> whileHeld = new ArrayList<>(lock.ownershipChecks());
    whileHeld.add(client.transactionOp().setData().forPath(zk.path("data"), new byte[] {1}));
    client.transaction().forOperations(whileHeld);
    List<CuratorOp> stale = new ArrayList<>(lock.ownershipChecks());
    stale.add(client.transactionOp().setData().forPath(zk.path("data"), new byte[] {2}));
    lock.release();

    assertThatThrownBy(() -> client.transaction().forOperations(stale))
        .isInstanceOf(KeeperException.NoNodeException.class);
    assertThat(client.getData().forPath(zk.path("data"))).containsExactly(1);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void participantNodes_listHolderFirst(LockKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    List<String> holderNodes = List.copyOf(holder.getParticipantNodes());
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Boolean> waiting = thread.call(() -> waiter.acquire(30, TimeUnit.SECONDS));
      await().until(() -> holder.getParticipantNodes().size() == 2 * holderNodes.size());

      assertThat(holder.getParticipantNodes()).startsWith(holderNodes.get(0));
      holder.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void stateListener_hearsHeldThenReleased(LockKind kind) throws Exception {
    FencedLock lock = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockStateChange> changes = new java.util.concurrent.CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(changes::add);

    lock.acquire();
    assertThat(changes).as("heard before acquire returned").hasSize(1);
    long token = lock.fencingToken();
    lock.release();

    assertThat(changes)
        .extracting(LockStateChange::state)
        .containsExactly(LockState.HELD, LockState.RELEASED);
    assertThat(changes).allSatisfy(change -> assertThat(change.fencingToken()).isEqualTo(token));
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void uncontendedCycle_costsThreeRequests(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    for (String path : kind.lockPaths(zk.path("lock"))) {
      // a persistent directory: the container reaper must not remove it between cycles
      client.create().creatingParentsIfNeeded().forPath(path);
    }
    long before = zk.requestsSoFar(client);
    lock.acquire();
    lock.release();
    long after = zk.requestsSoFar(client);

    assertThat(after - before).isEqualTo(3);
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquireWithZeroBudget_takesAFreeLockAndRefusesAHeldOne(LockKind kind) throws Exception {
    FencedLock first = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock second = kind.newLock(zk.newClient(), zk.path("lock"));

    ZeroBudgetTry.granted(
        "acquire(0)",
        () -> first.acquire(0, TimeUnit.SECONDS),
        () -> first.acquire(10, TimeUnit.SECONDS));
    assertThat(second.acquire(0, TimeUnit.SECONDS)).isFalse();
    first.release();

    await().atMost(Duration.ofSeconds(10)).until(() -> first.getParticipantNodes().isEmpty());
  }

  // Issue 21: the Duration form of the timed acquire.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void acquireWithADuration_refusesAHeldLock_andSaturatesATimeoutTooLongForNanoseconds(
      LockKind kind) throws Exception {
    FencedLock first = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock second = kind.newLock(zk.newClient(), zk.path("lock"));
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE); // Duration.toNanos() would overflow
    int nodesPerHolder = kind.lockPaths(zk.path("lock")).size();

    assertThat(first.acquire(forever)).as("a free lock").isTrue();
    assertThat(second.acquire(Duration.ofMillis(200))).as("a held lock").isFalse();
    await().until(() -> first.getParticipantNodes().size() == nodesPerHolder);
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Boolean> waiting = thread.call(() -> second.acquire(forever));
      await().until(() -> first.getParticipantNodes().size() == 2 * nodesPerHolder);
      assertThat(waiting).isNotDone();

      first.release();

      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(second::release).get(10, TimeUnit.SECONDS);
    }
    await().until(() -> first.getParticipantNodes().isEmpty());
  }
}
