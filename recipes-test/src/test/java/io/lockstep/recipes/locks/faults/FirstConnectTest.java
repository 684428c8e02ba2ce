package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Locks taken on a client that has not connected yet: the session id is 0 until the first connect
 * completes, and the owner of our node is the session the server names, not the value read before
 * the request went out. A reconnect of that same session, with our node intact, must then be
 * recognised as such: a hold stays ours, a waiter keeps its place, a withdrawn waiter's watch is
 * removed.
 *
 * <p>The first connect is delayed by a proxy latency, so the acquire is surely called before it.
 */
@Timeout(90)
class FirstConnectTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Each way: the first connect takes two of these, each later request another two. */
  private static final long LATENCY_MILLIS = 300;

  private TcpProxy proxy;
  private CuratorFramework client;

  @BeforeEach
  void startProxy() {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
  }

  @AfterEach
  void closeClientAndProxy() {
    CloseableUtils.closeQuietly(client);
  }

  /** Starts a client behind the slow proxy and returns at once, long before it has connected. */
  private CuratorFramework startWithoutWaiting() throws Exception {
    proxy.setLatency(LATENCY_MILLIS);
    client =
        CuratorFrameworkFactory.builder()
            .connectString(proxy.connectString())
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    client.start();
    assertThat(Sessions.id(client)).as("no session yet").isZero();
    return client;
  }

  /** The connection states the client reports from now on. */
  private static List<ConnectionState> recordConnectionStates(CuratorFramework client) {
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    return states;
  }

  /** Drops the client's connection and lets it reconnect at once, in the same session. */
  private void reconnectSameSession(long session) throws Exception {
    List<ConnectionState> connection = recordConnectionStates(client);
    proxy.cut();
    await().until(() -> connection.contains(ConnectionState.SUSPENDED));
    proxy.heal();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> connection.contains(ConnectionState.RECONNECTED));
    assertThat(Sessions.id(client)).as("the same session after reconnecting").isEqualTo(session);
  }

  /**
   * Waits until the queue has {@code size} nodes and {@code session} watches the node at {@code
   * index} (so its waiter has been answered all the way: created, read the queue, armed its watch).
   *
   * @return the queue at that point
   */
  private static List<String> awaitWatching(long session, FencedLock lock, int index, int size) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              List<String> queue = List.copyOf(lock.getParticipantNodes());
              return queue.size() == size
                  && zk.stats().watchedPaths(session).contains(queue.get(index));
            });
    return List.copyOf(lock.getParticipantNodes());
  }

  /**
   * Lock objects made before their namespaced client starts (as a Spring context makes its beans),
   * then used once it has: Curator gives a facade without the namespace to a started client only,
   * and the engine resolves its requests without the namespace (it makes the namespace node
   * itself).
   */
  @Test
  void locksMadeBeforeANamespacedClientStarts_workOnceItHas() throws Exception {
    client =
        CuratorFrameworkFactory.builder()
            .connectString(zk.server().getConnectString())
            .namespace("early")
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    ReentrantMutex mutex = new ReentrantMutex(client, zk.path("mutex"));
    ReadWriteMutex readWrite = new ReadWriteMutex(client, zk.path("rw"));
    client.start();

    assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(readWrite.writeLock().acquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(zk.newClient().getChildren().forPath("/early" + zk.path("mutex"))).hasSize(1);
    readWrite.writeLock().release();
    mutex.release();
  }

  // Breach 4: a hold taken before the first connect was reported LOST after a same-session
  // reconnect.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void holdTakenBeforeTheFirstConnect_survivesASameSessionReconnect_atRiskThenHeld(MutexKind kind)
      throws Exception {
    // A lock directory used before: the acquire's first request is then the create of our node.
    zk.newClient().create().creatingParentsIfNeeded().forPath(zk.path("lock"));
    CuratorFramework client = startWithoutWaiting();
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));

    lock.acquire();
    proxy.setLatency(0);
    long session = Sessions.id(client);
    assertThat(session).isNotZero();

    reconnectSameSession(session);
    await("the hold is confirmed or given up after the reconnect")
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              int atRisk = states.indexOf(LockState.AT_RISK);
              LockState last = states.get(states.size() - 1);
              return atRisk >= 0
                  && states.size() > atRisk + 1
                  && (last == LockState.HELD || last == LockState.LOST);
            });

    assertThat(states)
        .as("states of a hold across a reconnect of its own session")
        .doesNotContain(LockState.LOST)
        .startsWith(LockState.HELD, LockState.AT_RISK)
        .endsWith(LockState.HELD);
    lock.checkHeld();
    assertThat(lock.fencingToken()).isPositive();
    lock.release();
    zk.assertNothingLeft();
  }

  // Breach 4: a waiter enqueued before the first connect lost its place after a same-session
  // reconnect, and a later waiter overtook it.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void waiterEnqueuedBeforeTheFirstConnect_keepsItsPlaceAcrossASameSessionReconnect(MutexKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    CuratorFramework lateClient = zk.newClient();
    FencedLock late = kind.newLock(lateClient, zk.path("lock"));
    CuratorFramework client = startWithoutWaiting();
    FencedLock early = kind.newLock(client, zk.path("lock"));
    try (LockThread earlyThread = new LockThread("early-waiter");
        LockThread lateThread = new LockThread("late-waiter")) {
      CompletableFuture<Void> earlyWaiting = earlyThread.run(early::acquire);
      await().until(() -> Sessions.id(client) != 0);
      long session = Sessions.id(client);
      awaitWatching(session, holder, 0, 2);
      proxy.setLatency(0);
      CompletableFuture<Void> lateWaiting = lateThread.run(late::acquire);
      List<String> queue = awaitWatching(Sessions.id(lateClient), holder, 1, 3);

      reconnectSameSession(session);
      holder.release();

      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> earlyWaiting.isDone() || lateWaiting.isDone());
      assertThat(lateWaiting)
          .as(
              "the waiter enqueued after the reconnected one was granted first; queue was %s",
              queue)
          .isNotDone();
      earlyWaiting.get();
      earlyThread.run(early::release).get(10, TimeUnit.SECONDS);
      lateWaiting.get(10, TimeUnit.SECONDS);
      lateThread.run(late::release).get(10, TimeUnit.SECONDS);
    }
    zk.assertNothingLeft();
  }

  // Breach 4: a waiter enqueued before the first connect left its watch on the server when it
  // timed out.
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void timedOutWaiterEnqueuedBeforeTheFirstConnect_leavesNoWatch(MutexKind kind) throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    CuratorFramework client = startWithoutWaiting();
    FencedLock waiter = kind.newLock(client, zk.path("lock"));

    try (LockThread thread = new LockThread("waiter")) {
      // Connecting, creating, reading and arming the watch take about 8 latencies, well within 5 s.
      CompletableFuture<Boolean> acquired = thread.call(() -> waiter.acquire(5, TimeUnit.SECONDS));
      await().until(() -> Sessions.id(client) != 0);
      long session = Sessions.id(client);
      String holderNode = holder.getParticipantNodes().iterator().next();
      await("the waiter watches the holder's node")
          .until(() -> zk.stats().watchedPaths(session).contains(holderNode));

      assertThat(acquired.get(20, TimeUnit.SECONDS)).isFalse();
      proxy.setLatency(0);

      await("the timed-out waiter's watch is removed")
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(zk.stats().watchedPaths(session))
                      .as("paths session 0x%s still watches", Long.toHexString(session))
                      .isEmpty());
    }
    assertThat(holder.getParticipantNodes()).hasSize(1);
    holder.release();
    zk.assertNothingLeft();
  }

  /**
   * Two lock objects of a client that has not connected yet wait behind a holder: under local
   * handoff as members of one place (one node, whose create goes out before the first connect),
   * otherwise each on a node of its own. Across a same-session reconnect both keep their turns
   * ahead of another client's waiter enqueued later, and hold in the order they came, each with a
   * greater token than the hold before.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void twoWaitersOfAClientNotYetConnected_keepTheirTurnsAcrossASameSessionReconnect(MutexKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    holder.acquire();
    long holderToken = holder.fencingToken();
    CuratorFramework lateClient = zk.newClient();
    FencedLock late = kind.newLock(lateClient, zk.path("lock"));
    CuratorFramework client = startWithoutWaiting();
    FencedLock firstEarly = kind.newLock(client, zk.path("lock"));
    FencedLock secondEarly = kind.newLock(client, zk.path("lock"));
    CompletableFuture<LockHold> first = firstEarly.acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> second = secondEarly.acquireAsync().toCompletableFuture();
    await().until(() -> Sessions.id(client) != 0);
    long session = Sessions.id(client);
    int ours = kind.queueLength(1, 2); // the early waiters' nodes, behind the holder's
    for (int index = 0; index < ours; index++) {
      awaitWatching(session, holder, index, 1 + ours);
    }
    proxy.setLatency(0);
    try (LockThread lateThread = new LockThread("late-waiter")) {
      CompletableFuture<Void> lateWaiting = lateThread.run(late::acquire);
      List<String> queue = awaitWatching(Sessions.id(lateClient), holder, ours, 2 + ours);

      reconnectSameSession(session);
      holder.release();

      LockHold firstHold = first.get(20, TimeUnit.SECONDS);
      assertThat(List.of(second, lateWaiting))
          .as("waiters granted with the first early one; queue was %s", queue)
          .noneMatch(CompletableFuture::isDone);
      long firstToken = firstHold.fencingToken();
      assertThat(firstToken).isGreaterThan(holderToken);
      firstHold.close();
      LockHold secondHold = second.get(20, TimeUnit.SECONDS);
      assertThat(lateWaiting)
          .as(
              "the waiter enqueued after the reconnected ones was granted early; queue was %s",
              queue)
          .isNotDone();
      long secondToken = secondHold.fencingToken();
      assertThat(secondToken).isGreaterThan(firstToken);
      secondHold.close();
      lateWaiting.get(20, TimeUnit.SECONDS);
      assertThat(lateThread.call(late::fencingToken).get(10, TimeUnit.SECONDS))
          .isGreaterThan(secondToken);
      lateThread.run(late::release).get(10, TimeUnit.SECONDS);
    }
    zk.assertNothingLeft();
  }
}
