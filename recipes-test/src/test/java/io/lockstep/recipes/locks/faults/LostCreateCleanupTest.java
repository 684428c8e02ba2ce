package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A create whose answer was lost may have been applied: until the node is found by its protection
 * id, or the session ends, the attempt owns a node it cannot name. When the attempt ends in that
 * state (its budget runs out, it is interrupted, or the retry policy gives up), that duty remains:
 * the node must still be found and deleted while the session lives on, or it blocks every other
 * client for as long as the session lasts. Under local handoff the create is the place's, and the
 * duty passes to the place's attempt when its last local contender gives up.
 */
@Timeout(120)
class LostCreateCleanupTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** How long the proxy keeps the silent connection open after the lost answer. */
  private static final long SILENT_MILLIS = 4_000;

  /**
   * A client behind the proxy. A short connection timeout keeps the grace a timed-out acquire
   * allows its first attempt (one connection timeout) well below {@link #SILENT_MILLIS}.
   */
  private CuratorFramework clientThroughProxy(RetryPolicy retryPolicy) {
    return zk.newClient(
        b ->
            b.connectString(zk.proxy().connectString())
                .connectionTimeoutMs(1_000)
                .retryPolicy(retryPolicy));
  }

  // Breach 3a: a timed acquire that ran out of budget during a lost create left its node behind.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void timedAcquire_runningOutDuringALostCreate_stillDeletesTheNodeInTheLiveSession(MutexKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("lock"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(100, 100));
    long session = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    zk.proxy().loseNextResponse(SILENT_MILLIS);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Boolean> acquired =
          thread.call(() -> lock.acquire(200, TimeUnit.MILLISECONDS));
      awaitCreateAppliedButUnanswered(admin, paths, session);

      assertTimedOut(acquired);
    }

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(kind.newLock(zk.newClient(), zk.path("lock")));
  }

  // Breach 3b: an acquire interrupted during a lost create left its node behind.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void acquire_interruptedDuringALostCreate_stillDeletesTheNodeInTheLiveSession(MutexKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("lock"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(100, 100));
    long session = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    zk.proxy().loseNextResponse(SILENT_MILLIS);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Void> acquiring = thread.run(lock::acquire);
      awaitCreateAppliedButUnanswered(admin, paths, session);

      thread.thread().interrupt();

      assertThatThrownBy(() -> acquiring.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(InterruptedException.class);
    }

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(kind.newLock(zk.newClient(), zk.path("lock")));
  }

  // Breach 3b: a multi-lock interrupted (MultiMutex has no local handoff: plain only) during a lost
  // enqueue transaction left its nodes behind.
  @Test
  void multiMutexAcquire_interruptedDuringALostTransaction_stillDeletesItsNodesInTheLiveSession()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("a"), zk.path("b"), zk.path("c"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(100, 100));
    long session = Sessions.id(client);
    MultiMutex lock = new MultiMutex(client, paths);

    zk.proxy().loseNextResponse(SILENT_MILLIS);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Void> acquiring = thread.run(lock::acquire);
      awaitCreateAppliedButUnanswered(admin, paths, session);

      thread.thread().interrupt();

      assertThatThrownBy(() -> acquiring.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(InterruptedException.class);
    }

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(new MultiMutex(zk.newClient(), paths));
  }

  // Breach 3c: an acquire whose retry policy gave up after a lost create left its node behind.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void acquire_failingByRetryPolicyAfterALostCreate_stillDeletesTheNodeInTheLiveSession(
      MutexKind kind) throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("lock"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(0, 0));
    long session = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    zk.proxy().loseNextResponse(SILENT_MILLIS);
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Void> acquiring = thread.run(lock::acquire);
      awaitCreateAppliedButUnanswered(admin, paths, session);

      assertThatThrownBy(() -> acquiring.get(30, TimeUnit.SECONDS))
          .as("acquire whose retry policy allows no retry after connection loss")
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockException.class);
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
    }

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(kind.newLock(zk.newClient(), zk.path("lock")));
  }

  // Breach 3c: the same, with the link kept cut for a while (retries used up), then healed.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void acquire_failingByRetryPolicyWhileTheLinkIsCut_stillDeletesTheNodeOnceHealed(MutexKind kind)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("lock"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(2, 100));
    long session = Sessions.id(client);
    FencedLock lock = kind.newLock(client, zk.path("lock"));

    zk.proxy().loseNextResponse(60_000); // the connection goes silent; the cut below closes it
    try (LockThread thread = new LockThread("acquirer")) {
      CompletableFuture<Void> acquiring = thread.run(lock::acquire);
      awaitCreateAppliedButUnanswered(admin, paths, session);
      zk.proxy().cut();

      assertThatThrownBy(() -> acquiring.get(30, TimeUnit.SECONDS))
          .as("acquire whose retries run out while the link is cut")
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockException.class);
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
    }
    zk.proxy().heal();

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(kind.newLock(zk.newClient(), zk.path("lock")));
  }

  /**
   * Under local handoff the lost create is the place's, shared by the client's local contenders:
   * the first to run out of budget while another still waits must leave the place's attempt going,
   * and the one still waiting holds once the node is found by its protection id, on that node,
   * without a duplicate. Local handoff only: without it each waiter has a create of its own.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aLocalWaiterRunningOutDuringALostCreate_leavesThePlaceToTheNextOne_whichAdoptsTheNode(
      MutexKind kind) throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("lock"));
    createDirectories(admin, paths);
    CuratorFramework client = clientThroughProxy(new RetryNTimes(100, 100));
    long session = Sessions.id(client);
    FencedLock first = kind.newLock(client, zk.path("lock"));
    FencedLock second = kind.newLock(client, zk.path("lock"));

    zk.proxy().loseNextResponse(SILENT_MILLIS);
    try (LockThread thread = new LockThread("first")) {
      CompletableFuture<Boolean> acquired =
          thread.call(() -> first.acquire(200, TimeUnit.MILLISECONDS));
      awaitCreateAppliedButUnanswered(admin, paths, session);
      CompletableFuture<LockHold> secondWaiting = second.acquireAsync().toCompletableFuture();

      assertTimedOut(acquired);
      LockHold hold = secondWaiting.get(30, TimeUnit.SECONDS);
      List<String> owned = nodesOwnedBy(admin, paths, session);
      assertThat(owned).as("our nodes once the second local waiter holds").hasSize(1);
      assertThat(admin.getChildren().forPath(zk.path("lock"))).hasSize(1);
      assertThat(hold.fencingToken())
          .as("the token of the first hold of the place")
          .isEqualTo(admin.checkExists().forPath(owned.get(0)).getCzxid());
      assertThat(Sessions.id(client)).as("the same session all along").isEqualTo(session);
      hold.close();
    }

    assertOurNodesDeletedInTheLiveSession(admin, paths, client, session);
    assertAnotherClientCanAcquire(kind.newLock(zk.newClient(), zk.path("lock")));
  }

  /**
   * The create's answer never came within the budget, on a connection the client still believed
   * alive: slow, not unreachable (see SlowIsNotUnreachableTest), so the acquire says "busy".
   */
  private static void assertTimedOut(CompletableFuture<Boolean> acquired) {
    assertThat(acquired)
        .as("acquire with a 200 ms budget")
        .succeedsWithin(Duration.ofSeconds(30))
        .isEqualTo(false);
  }

  private static void createDirectories(CuratorFramework admin, List<String> paths)
      throws Exception {
    for (String path : paths) {
      admin.create().creatingParentsIfNeeded().forPath(path);
    }
  }

  /** The create reached the server, which applied it, and its answer is lost on the way back. */
  private void awaitCreateAppliedButUnanswered(
      CuratorFramework admin, List<String> paths, long session) throws Exception {
    assertThat(zk.proxy().awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
    await("the create was applied on the server")
        .atMost(Duration.ofSeconds(10))
        .until(() -> nodesOwnedBy(admin, paths, session).size() == paths.size());
  }

  /** Within a bounded time, and while the client's session lives on, our nodes are gone. */
  private static void assertOurNodesDeletedInTheLiveSession(
      CuratorFramework admin, List<String> paths, CuratorFramework client, long session)
      throws Exception {
    await("the nodes of the ended attempt are deleted")
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(nodesOwnedBy(admin, paths, session))
                    .as(
                        "nodes of session 0x%s left after the attempt ended",
                        Long.toHexString(session))
                    .isEmpty());
    assertThat(Sessions.id(client)).as("the same session all along").isEqualTo(session);
  }

  private static void assertAnotherClientCanAcquire(FencedLock other) throws Exception {
    try (LockThread thread = new LockThread("other")) {
      assertThat(thread.call(() -> other.acquire(10, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS))
          .as("another client acquires")
          .isTrue();
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }
  }

  /** The children of {@code paths} whose ephemeral owner is {@code session}, as full paths. */
  private static List<String> nodesOwnedBy(CuratorFramework admin, List<String> paths, long session)
      throws Exception {
    List<String> owned = new ArrayList<>();
    for (String path : paths) {
      for (String child : admin.getChildren().forPath(path)) {
        Stat stat = admin.checkExists().forPath(path + "/" + child);
        if (stat != null && stat.getEphemeralOwner() == session) {
          owned.add(path + "/" + child);
        }
      }
    }
    return owned;
  }
}
