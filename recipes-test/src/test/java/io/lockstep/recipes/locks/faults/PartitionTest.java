package io.lockstep.recipes.locks.faults;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A holder cut off from ZooKeeper, silently, for longer than its session. */
@Timeout(90)
class PartitionTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void silentlyPartitionedHolder_isToldAtRiskBeforeTheLockPassesOn_thenLost(MutexKind kind)
      throws Exception {
    CuratorFramework holderClient = throughProxy(4_000);
    FencedLock holder = kind.newLock(holderClient, zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, firstSeen);
    holder.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Long> grantedAt =
          thread.call(
              () -> {
                waiter.acquire();
                return System.nanoTime();
              });
      await().until(() -> waiter.getParticipantNodes().size() == 2);

      zk.proxy().blackhole();

      long granted = grantedAt.get(30, TimeUnit.SECONDS);
      assertThat(firstSeen).containsKey(LockState.AT_RISK);
      assertThat(firstSeen.get(LockState.AT_RISK))
          .as("the holder was told its lock was at risk before the lock passed on")
          .isLessThan(granted);

      zk.proxy().heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      holder.release();
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(states).startsWith(LockState.HELD, LockState.AT_RISK).contains(LockState.LOST);
  }

  /**
   * A waiter of the same client that gives up while the link is silent asks the server to remove
   * its watch, and that request is still unanswered when the client notices the dead connection.
   * ZooKeeper's client (3.9) reports a failed local-only watch removal as a watch event in the
   * Disconnected state and then drops the real Disconnected event as a repeat: Curator would never
   * go SUSPENDED, and the holder would never hear AT_RISK while its session expired.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void aWaiterGivingUpDuringTheSilence_doesNotHideTheDisconnectFromTheHolder(MutexKind kind)
      throws Exception {
    CuratorFramework partitioned = throughProxy(4_000);
    CuratorFramework other = zk.newClient();
    FencedLock holder = kind.newLock(partitioned, zk.path("held"));
    FencedLock next = kind.newLock(other, zk.path("held"));
    FencedLock busy = kind.newLock(other, zk.path("busy"));
    // Under local handoff the waiter is the only member of its client's place on "busy": giving
    // up withdraws the place's attempt, whose watch removal is the request cut off here.
    FencedLock givingUp = kind.newLock(partitioned, zk.path("busy"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, firstSeen);
    holder.acquire();
    busy.acquire();
    try (LockThread giver = new LockThread("giving-up");
        LockThread waiter = new LockThread("next")) {
      CompletableFuture<Boolean> gaveUp = giver.call(() -> givingUp.acquire(1_500, MILLISECONDS));
      String busyNode = busy.getParticipantNodes().iterator().next();
      await().until(() -> zk.stats().watchedPaths(Sessions.id(partitioned)).contains(busyNode));

      zk.proxy().blackhole();
      CompletableFuture<Long> grantedAt =
          waiter.call(
              () -> {
                next.acquire();
                return System.nanoTime();
              });
      // it returns once its node is deleted, or after a connection timeout's grace
      assertThat(gaveUp.get(30, TimeUnit.SECONDS)).as("the waiter gave up").isFalse();
      long granted = grantedAt.get(30, TimeUnit.SECONDS);
      assertThat(firstSeen).as("the holder heard AT_RISK").containsKey(LockState.AT_RISK);
      assertThat(firstSeen.get(LockState.AT_RISK))
          .as("the holder was told its lock was at risk before the lock passed on")
          .isLessThan(granted);

      zk.proxy().heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      holder.release();
      waiter.run(next::release).get(10, TimeUnit.SECONDS);
    }
    busy.release();
  }

  /**
   * A watch removal that fails with the connection is sent again once the client reconnects in the
   * same session: the client sets its watches again on reconnecting, and without the second removal
   * the gone waiter's watch would stay on the server until the node it watched changed.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void aWatchRemovalCutOffByThePartition_isSentAgainAfterTheReconnect(MutexKind kind)
      throws Exception {
    CuratorFramework partitioned = throughProxy(8_000);
    CuratorFramework other = zk.newClient();
    FencedLock busy = kind.newLock(other, zk.path("busy"));
    FencedLock givingUp = kind.newLock(partitioned, zk.path("busy"));
    FencedLock holder = kind.newLock(partitioned, zk.path("held"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, new ConcurrentHashMap<>());
    holder.acquire();
    busy.acquire();
    long session = Sessions.id(partitioned);
    String busyNode = busy.getParticipantNodes().iterator().next();
    try (LockThread giver = new LockThread("giving-up")) {
      CompletableFuture<Boolean> gaveUp = giver.call(() -> givingUp.acquire(1_000, MILLISECONDS));
      await().until(() -> zk.stats().watchedPaths(session).contains(busyNode));

      zk.proxy().blackhole();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      zk.proxy().heal();
      assertThat(gaveUp.get(30, TimeUnit.SECONDS)).as("the waiter gave up").isFalse();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> states.lastIndexOf(LockState.HELD) > states.indexOf(LockState.AT_RISK));
    }
    assertThat(Sessions.id(partitioned)).as("the same session").isEqualTo(session);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(zk.stats().watchedPaths(session))
                    .as("the gone waiter's watch, set again by the reconnect, is removed")
                    .doesNotContain(busyNode));
    holder.release();
    busy.release();
  }

  /**
   * A second lock object of the partitioned holder's client waits behind it: under local handoff in
   * memory, on the holder's node, otherwise on a node of its own. Either way it goes with the
   * session, and must queue again in the client's next session, behind the other client's waiter
   * that the expiry let in, with a token greater than both earlier holds'.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void silentlyPartitionedHolder_withAWaiterOfItsOwnClient_isLost_andTheWaiterHoldsInTheNextSession(
      MutexKind kind) throws Exception {
    // Retries for as long as the client may take to reach its next session: the waiter's new
    // attempt can start while the link is still silent (Curator declares the session lost itself
    // once it has been suspended for a session timeout).
    CuratorFramework partitioned = throughProxy(4_000, new RetryNTimes(100, 200));
    long firstSession = Sessions.id(partitioned);
    FencedLock holder = kind.newLock(partitioned, zk.path("lock"));
    FencedLock sibling = kind.newLock(partitioned, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    Map<LockState, Long> firstSeen = new ConcurrentHashMap<>();
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(holder, states, firstSeen);
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> siblingHold = sibling.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 2));
    long otherToken;
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Long> grantedAt =
          thread.call(
              () -> {
                other.acquire();
                return System.nanoTime();
              });
      await().until(() -> other.getParticipantNodes().size() == kind.queueLength(1, 2) + 1);

      zk.proxy().blackhole();

      long granted = grantedAt.get(30, TimeUnit.SECONDS);
      assertThat(firstSeen).as("the holder heard AT_RISK").containsKey(LockState.AT_RISK);
      assertThat(firstSeen.get(LockState.AT_RISK))
          .as("the holder was told its lock was at risk before the lock passed on")
          .isLessThan(granted);
      assertThat(siblingHold).as("the holder's client's waiter, while the other holds").isNotDone();

      zk.proxy().heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(holder::checkHeld).isInstanceOf(LockOwnershipLostException.class);
      holder.release();
      otherToken = thread.call(other::fencingToken).get(10, TimeUnit.SECONDS);
      assertThat(otherToken).as("the other client's token").isGreaterThan(holderToken);
      assertThat(siblingHold).as("the holder's client's waiter, while the other holds").isNotDone();
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }

    LockHold hold = siblingHold.get(30, TimeUnit.SECONDS);
    assertThat(hold.state()).isEqualTo(LockState.HELD);
    assertThat(hold.fencingToken()).as("the waiter's token").isGreaterThan(otherToken);
    assertThat(states).startsWith(LockState.HELD, LockState.AT_RISK).contains(LockState.LOST);
    List<String> queue = List.copyOf(sibling.getParticipantNodes());
    assertThat(queue).as("the waiter's node, alone in the queue").hasSize(1);
    Stat node = zk.newClient().checkExists().forPath(queue.get(0));
    assertThat(node.getEphemeralOwner())
        .as("the owner of the waiter's node")
        .isEqualTo(Sessions.id(partitioned))
        .isNotEqualTo(firstSession);
    hold.close();
  }

  /**
   * Under local handoff a release while the link is silent hands nothing on in memory: the session
   * may end on the server meanwhile and another client hold. So the next local contender waits, and
   * is never granted beside the other client; once the link heals its client hears that the session
   * ended, and it queues anew, behind the other client, whose release grants it, HELD, with a
   * greater token. (Before, it was handed the hold at once, at risk, while the other client took
   * the lock.)
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aReleaseDuringTheSilence_handsNothingOn_theNextLocalContenderQueuesAnewOnceItHeals(
      MutexKind kind) throws Exception {
    CuratorFramework partitioned = throughProxy(8_000, new RetryNTimes(100, 200));
    FencedLock holder = kind.newLock(partitioned, zk.path("lock"));
    FencedLock sibling = kind.newLock(partitioned, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> holderStates = new CopyOnWriteArrayList<>();
    record(holder, holderStates, new ConcurrentHashMap<>());
    List<LockState> siblingStates = new CopyOnWriteArrayList<>();
    record(sibling, siblingStates, new ConcurrentHashMap<>());
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> siblingHold = sibling.acquireAsync().toCompletableFuture();
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);

      zk.proxy().blackhole();
      await().atMost(Duration.ofSeconds(20)).until(() -> holderStates.contains(LockState.AT_RISK));
      holder.release();

      otherWaiting.get(30, TimeUnit.SECONDS); // the server ended the silent client's session
      long otherToken = thread.call(other::fencingToken).get(10, TimeUnit.SECONDS);
      assertThat(otherToken).isGreaterThan(holderToken);
      assertThat(siblingHold).as("nothing handed on beside the other client").isNotDone();
      assertThat(siblingStates).isEmpty();

      zk.proxy().heal();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> sibling.getParticipantNodes().size() == 2); // queued anew, behind
      assertThat(siblingHold).isNotDone();
      thread.run(other::release).get(10, TimeUnit.SECONDS);

      LockHold hold = siblingHold.get(30, TimeUnit.SECONDS);
      assertThat(hold.state()).isEqualTo(LockState.HELD);
      assertThat(hold.fencingToken()).isGreaterThan(otherToken);
      hold.close();
    }
  }

  /**
   * Under local handoff a hold that is not the first of its place takes its token from a write of
   * the shared node, made when the token is first asked for. Asked while the link is silent, that
   * write cannot land: the caller must get a failure (within the retry policy, or at the loss of
   * the session at the latest), never a token, since another client holds with a greater one by
   * then. Local handoff only: a plain hold's token is known from its grant.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aLocalHoldersTokenAskedDuringTheSilence_isRefused_andTheHoldIsLost(MutexKind kind)
      throws Exception {
    CuratorFramework partitioned = throughProxy(4_000);
    FencedLock first = kind.newLock(partitioned, zk.path("lock"));
    FencedLock second = kind.newLock(partitioned, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    record(second, states, new ConcurrentHashMap<>());
    first.acquire();
    long firstToken = first.fencingToken();
    CompletableFuture<LockHold> secondWaiting = second.acquireAsync().toCompletableFuture();
    first.release();
    LockHold hold = secondWaiting.get(10, TimeUnit.SECONDS);
    try (LockThread thread = new LockThread("other");
        LockThread asker = new LockThread("asker")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);

      zk.proxy().blackhole();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      CompletableFuture<Long> token = asker.call(hold::fencingToken);

      assertThatThrownBy(() -> token.get(40, TimeUnit.SECONDS))
          .as("the token of a local hold, asked while the link is silent")
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOfAny(LockOwnershipLostException.class, LockException.class);
      otherWaiting.get(30, TimeUnit.SECONDS);
      assertThat(thread.call(other::fencingToken).get(10, TimeUnit.SECONDS))
          .isGreaterThan(firstToken);

      zk.proxy().heal();
      await().atMost(Duration.ofSeconds(30)).until(() -> states.contains(LockState.LOST));
      assertThat(states).containsExactly(LockState.HELD, LockState.AT_RISK, LockState.LOST);
      assertThatThrownBy(hold::fencingToken).isInstanceOf(LockOwnershipLostException.class);
      hold.close();
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }
  }

  /** A client that reaches the server through the proxy, with a short retry policy. */
  private CuratorFramework throughProxy(int sessionTimeoutMs) {
    return throughProxy(sessionTimeoutMs, new RetryNTimes(3, 100));
  }

  /** A client that reaches the server through the zk.proxy(). */
  private CuratorFramework throughProxy(int sessionTimeoutMs, RetryPolicy retryPolicy) {
    return zk.newClient(
        b ->
            b.connectString(zk.proxy().connectString())
                .sessionTimeoutMs(sessionTimeoutMs)
                .retryPolicy(retryPolicy));
  }

  /** Records every state the lock's holds hear, and when each state was first heard. */
  private static void record(
      FencedLock lock, List<LockState> states, Map<LockState, Long> firstSeen) {
    lock.getStateListenable()
        .addListener(
            (LockStateChange change) -> {
              states.add(change.state());
              firstSeen.putIfAbsent(change.state(), System.nanoTime());
            });
  }
}
