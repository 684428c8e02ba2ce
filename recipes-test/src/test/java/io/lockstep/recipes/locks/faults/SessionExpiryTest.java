package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The session of a client that holds a lock, with another contender of the same client waiting,
 * expires. Under local handoff the two share the client's one node, so the waiter loses its place
 * with the holder's hold and must take a new one; without it each had a node of its own, both gone.
 */
@Timeout(90)
class SessionExpiryTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /**
   * The holder hears LOST; the other client's waiter, queued behind both, is granted first; the
   * waiter of the expired client holds afterwards on a node of the client's next session, with a
   * token greater than both earlier holds'.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void sessionExpiry_holderIsLost_andAWaiterOfItsClientHoldsInTheNextSession_afterTheOtherClient(
      MutexKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    long firstSession = Sessions.id(client);
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    FencedLock sibling = kind.newLock(client, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> siblingWaiting = sibling.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 2));
    List<String> before;
    long otherToken;
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 2) + 1);
      before = List.copyOf(holder.getParticipantNodes());

      Sessions.expire(client, zk.server().getConnectString());

      otherWaiting.get(20, TimeUnit.SECONDS);
      otherToken = thread.call(other::fencingToken).get(10, TimeUnit.SECONDS);
      assertThat(otherToken).as("the other client's token").isGreaterThan(holderToken);
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      holder.release();
      await("the waiter of the expired client queues again")
          .atMost(Duration.ofSeconds(20))
          .until(() -> holder.getParticipantNodes().size() == 2);
      assertThat(siblingWaiting)
          .as("the expired client's waiter, while the other holds")
          .isNotDone();
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }

    LockHold hold = siblingWaiting.get(20, TimeUnit.SECONDS);
    assertThat(hold.state()).isEqualTo(LockState.HELD);
    assertThat(hold.fencingToken()).as("the waiter's token").isGreaterThan(otherToken);
    List<String> queue = List.copyOf(sibling.getParticipantNodes());
    assertThat(queue).as("the waiter's node, alone in the queue").hasSize(1);
    assertThat(before).as("the nodes before the expiry").doesNotContain(queue.get(0));
    Stat node = zk.newClient().checkExists().forPath(queue.get(0));
    assertThat(node.getEphemeralOwner())
        .as("the owner of the waiter's node")
        .isEqualTo(Sessions.id(client))
        .isNotEqualTo(firstSession);
    assertThat(states).endsWith(LockState.LOST, LockState.RELEASED);
    hold.close();
  }

  /**
   * Under local handoff a release passes the hold on in memory, so a release made after the server
   * expired the session, but before the client heard it, still grants the next local contender
   * (held to its knowledge, as the holder was). What must never happen is that this hold gets a
   * token: another client was granted before it, with a greater one. Asking for it writes the
   * client's node, which the expiry deleted, so the hold gets a failure, and then hears LOST. The
   * window is held open by stalling the client's event thread, through which every answer and
   * connection event passes. Local handoff only: without it a waiter of the same client is granted
   * by the server's answers, which no expired session gets.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aLocalHandoffBeforeTheClientHearsItsSessionExpired_yieldsNoToken_andIsLost(MutexKind kind)
      throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    FencedLock next = kind.newLock(client, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> nextStates = new CopyOnWriteArrayList<>();
    next.getStateListenable().addListener(change -> nextStates.add(change.state()));
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> nextWaiting = next.acquireAsync().toCompletableFuture();
    CountDownLatch resume = new CountDownLatch(1);
    try (LockThread thread = new LockThread("other");
        LockThread asker = new LockThread("asker")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2);
      stallEventThread(client, resume);

      Sessions.expire(client, zk.server().getConnectString());
      otherWaiting.get(20, TimeUnit.SECONDS);
      long otherToken = thread.call(other::fencingToken).get(10, TimeUnit.SECONDS);
      assertThat(otherToken).as("the other client's token").isGreaterThan(holderToken);
      holder.release();
      LockHold nextHold = nextWaiting.get(10, TimeUnit.SECONDS);
      CompletableFuture<Long> token = asker.call(nextHold::fencingToken);
      resume.countDown();

      assertThatThrownBy(() -> token.get(20, TimeUnit.SECONDS))
          .as("the token of a hold handed on after the session expired, another client holding")
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOfAny(LockOwnershipLostException.class, LockException.class);
      await().atMost(Duration.ofSeconds(20)).until(() -> nextStates.contains(LockState.LOST));
      assertThat(nextHold.state()).isEqualTo(LockState.LOST);
      assertThatThrownBy(nextHold::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      nextHold.close();
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    } finally {
      resume.countDown();
    }
  }

  /**
   * A local holder that took ownership checks makes the next local handoff wait for a write of the
   * shared node, so that its checks fail before anyone else holds. If the session expires (unheard
   * yet) when the holder lets go, that write cannot land: the next local contender must not be
   * granted on the old node, but take a new place behind the client that the expiry let in, with a
   * greater token. Local handoff only: without it there is no shared node to write.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aHandoffAwaitingItsFenceWrite_whenTheSessionExpired_grantsTheNextLocalHolderANewNode(
      MutexKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    long firstSession = Sessions.id(client);
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    FencedLock next = kind.newLock(client, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    List<CuratorOp> checks = holder.ownershipChecks();
    CompletableFuture<LockHold> nextWaiting = next.acquireAsync().toCompletableFuture();
    CountDownLatch resume = new CountDownLatch(1);
    long otherToken;
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2);
      List<String> before = List.copyOf(holder.getParticipantNodes());
      stallEventThread(client, resume);

      Sessions.expire(client, zk.server().getConnectString());
      otherWaiting.get(20, TimeUnit.SECONDS);
      otherToken = thread.call(other::fencingToken).get(10, TimeUnit.SECONDS);
      holder.release();
      await("the next local contender, while the handoff awaits its write")
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> !nextWaiting.isDone());
      resume.countDown();

      await("the next local contender queues on a new node")
          .atMost(Duration.ofSeconds(20))
          .until(
              () -> {
                List<String> queue = List.copyOf(other.getParticipantNodes());
                return queue.size() == 2 && !before.contains(queue.get(1));
              });
      assertThat(nextWaiting).as("the next local contender, while the other holds").isNotDone();
      assertThatThrownBy(
              () -> zk.newClient().transaction().forOperations(checks), "the old holder's checks")
          .isInstanceOf(KeeperException.class);
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    } finally {
      resume.countDown();
    }

    LockHold hold = nextWaiting.get(20, TimeUnit.SECONDS);
    assertThat(hold.state()).isEqualTo(LockState.HELD);
    assertThat(hold.fencingToken()).as("the next holder's token").isGreaterThan(otherToken);
    List<String> queue = List.copyOf(next.getParticipantNodes());
    assertThat(queue).hasSize(1);
    assertThat(zk.newClient().checkExists().forPath(queue.get(0)).getEphemeralOwner())
        .as("the owner of the next holder's node")
        .isEqualTo(Sessions.id(client))
        .isNotEqualTo(firstSession);
    hold.close();
  }

  /**
   * Occupies the client's event thread until {@code resume} opens: watch events, connection events
   * and the answers to asynchronous requests queue behind it.
   */
  private static void stallEventThread(CuratorFramework client, CountDownLatch resume)
      throws Exception {
    CountDownLatch stalled = new CountDownLatch(1);
    client
        .getZookeeperClient()
        .getZooKeeper()
        .sync(
            "/",
            (rc, p, ctx) -> {
              stalled.countDown();
              try {
                resume.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            null);
    assertThat(stalled.await(10, TimeUnit.SECONDS)).as("event thread stalled").isTrue();
  }
}
