package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A budget is a budget whatever the connection state: with ZooKeeper unreachable (the client's
 * proxy refuses it, as a stopped server does), every timed form returns within its budget plus a
 * small margin and says "unreachable" ({@link LockUnreachableException}, or {@code false} from the
 * {@code Lock} view), and releases return at once, their deletes finished in the background once
 * the client is back. The client's connection timeout (10 s) is far above the budgets, so a call
 * that waits for the connection instead of its budget fails here.
 *
 * <p>The margin asserted is generous (a loaded two-core machine); the figures measured are on the
 * benchmark page. That a busy lock still says "busy" ({@code false}) is {@link LockFailureTest}'s.
 */
@Timeout(120)
class UnreachableBudgetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final Duration BUDGET = Duration.ofMillis(500);

  /** What the tests allow above a budget: 250 ms promised, the rest for a loaded machine. */
  private static final long MARGIN_MILLIS = 1_000;

  private final List<CuratorFramework> closeables = new CopyOnWriteArrayList<>();

  private TcpProxy proxy;
  private CuratorFramework client;
  private final List<ConnectionState> states = new CopyOnWriteArrayList<>();

  @BeforeEach
  void startClientBehindProxy() throws Exception {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
    client = newClient(proxy.connectString(), new ExponentialBackoffRetry(100, 3));
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
  }

  @AfterEach
  void closeAll() {
    CloseableUtils.closeQuietly(client);
    closeables.forEach(CloseableUtils::closeQuietly);
  }

  private CuratorFramework newClient(String connectString, org.apache.curator.RetryPolicy retry) {
    CuratorFramework made =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(retry)
            .ensembleTracker(false)
            .build();
    made.start();
    closeables.add(made);
    return made;
  }

  /** ZooKeeper goes away for our client, and the client has noticed. */
  private void cutOff() {
    proxy.cut();
    await().atMost(Duration.ofSeconds(10)).until(() -> states.contains(ConnectionState.SUSPENDED));
  }

  /** ZooKeeper is back and our client reconnected to its session. */
  private void reconnect(CuratorFramework reconnecting) {
    proxy.heal();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> reconnecting.getZookeeperClient().isConnected());
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  private static void assertWithinBudget(long elapsedMillis, Duration budget) {
    assertThat(elapsedMillis)
        .as("returned within its budget of %s plus a margin", budget)
        .isLessThan(budget.toMillis() + MARGIN_MILLIS);
  }

  /** Nodes left under the lock's paths, read by a client that can reach ZooKeeper. */
  private static long nodesUnder(LockKind kind, String path) throws Exception {
    CuratorFramework reader = zk.newClient();
    long count = 0;
    for (String lockPath : kind.lockPaths(path)) {
      count += ZooKeeperExtension.childrenOrNone(reader, lockPath).size();
    }
    return count;
  }

  /**
   * Every timed form, one after another on a client cut off from ZooKeeper whose retry policy never
   * gives up: each keeps its budget and says "unreachable"; observers hear {@code UNREACHABLE};
   * once ZooKeeper is back nothing is left and the lock is granted.
   */
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void everyTimedForm_whenUnreachable_keepsItsBudgetAndSaysUnreachable(LockKind kind)
      throws Exception {
    CuratorFramework patient = newClient(proxy.connectString(), new RetryForever(200));
    patient.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    assertThat(patient.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    List<AcquireOutcome> outcomes = new CopyOnWriteArrayList<>();
    LockObservers.of(patient)
        .addListener(
            new LockObserver() {
              @Override
              public void attemptEnded(
                  LockAttempt attempt, AcquireOutcome outcome, Duration waited, long token) {
                outcomes.add(outcome);
              }
            });
    String path = zk.path("lock");
    FencedLock lock = kind.newLock(patient, path);
    states.clear();
    cutOff();

    long start = System.nanoTime();
    assertThatThrownBy(() -> lock.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS))
        .as("acquire(time, unit)")
        .isInstanceOf(LockUnreachableException.class)
        .hasMessageContaining(path);
    assertWithinBudget(millisSince(start), BUDGET);

    start = System.nanoTime();
    assertThatThrownBy(() -> lock.acquire(0, TimeUnit.SECONDS))
        .as("acquire(0, unit)")
        .isInstanceOf(LockUnreachableException.class);
    assertWithinBudget(millisSince(start), Duration.ZERO);

    start = System.nanoTime();
    assertThatThrownBy(() -> lock.tryHold(BUDGET))
        .as("tryHold")
        .isInstanceOf(LockUnreachableException.class);
    assertWithinBudget(millisSince(start), BUDGET);

    start = System.nanoTime();
    CompletableFuture<LockHold> hold = lock.acquireAsync(BUDGET).toCompletableFuture();
    assertThatThrownBy(hold::join)
        .as("acquireAsync")
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LockUnreachableException.class);
    assertWithinBudget(millisSince(start), BUDGET);

    LockView view = lock.asLock();
    start = System.nanoTime();
    assertThat(view.tryLock(BUDGET.toMillis(), TimeUnit.MILLISECONDS))
        .as("tryLock(time)")
        .isFalse();
    assertWithinBudget(millisSince(start), BUDGET);
    start = System.nanoTime();
    assertThat(view.tryLock()).as("tryLock()").isFalse();
    assertWithinBudget(millisSince(start), Duration.ZERO);

    await().atMost(Duration.ofSeconds(5)).until(() -> outcomes.size() >= 6);
    assertThat(outcomes).containsOnly(AcquireOutcome.UNREACHABLE);

    reconnect(patient);
    await().atMost(Duration.ofSeconds(20)).until(() -> nodesUnder(kind, path) == 0);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("acquired once ZooKeeper is back").isTrue();
    lock.release();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void releaseAndClose_whenUnreachable_returnAtOnce_andTheNodesGoOnceBack(LockKind kind)
      throws Exception {
    FencedLock released = kind.newLock(client, zk.path("released"));
    released.acquire();
    LockHold closed = kind.newLock(client, zk.path("closed")).hold();
    cutOff();

    long start = System.nanoTime();
    released.release();
    assertWithinBudget(millisSince(start), Duration.ZERO);
    start = System.nanoTime();
    closed.close();
    assertWithinBudget(millisSince(start), Duration.ZERO);

    reconnect(client);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> nodesUnder(kind, zk.path("released")) + nodesUnder(kind, zk.path("closed")) == 0);
  }

  /**
   * A silent partition: the client still believes it is connected (until its read timeout, 20 s
   * here), and its create goes unanswered. The budget holds, and the caller hears "busy": slow and
   * silent cannot be told apart until the client notices (then it hears "unreachable", see {@link
   * SlowIsNotUnreachableTest}). The node the create makes once the partition heals is deleted.
   */
  @ParameterizedTest
  @EnumSource(names = {"REENTRANT_MUTEX", "MULTI_MUTEX", "REENTRANT_MUTEX_LOCAL_HANDOFF"})
  void timedAcquire_duringASilentPartition_beforeTheClientNotices_saysBusyWithinItsBudget(
      LockKind kind) throws Exception {
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    proxy.blackhole();

    long start = System.nanoTime();
    assertThat(lock.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
    assertWithinBudget(millisSince(start), BUDGET);

    proxy.heal();
    await().atMost(Duration.ofSeconds(30)).until(() -> nodesUnder(kind, zk.path("lock")) == 0);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("acquired once ZooKeeper answers").isTrue();
    lock.release();
  }

  /** A local waiter behind a local holder keeps its budget when the place's client is cut off. */
  @Test
  void localWaiter_whenUnreachable_keepsItsBudget() throws Exception {
    String path = zk.path("lock");
    FencedLock first = ReentrantMutex.builder(client, path).localHandoff(4).build();
    FencedLock second = ReentrantMutex.builder(client, path).localHandoff(4).build();
    try (LockThread holder = new LockThread("holder");
        LockThread waiter = new LockThread("waiter")) {
      holder.run(first::acquire).get(10, TimeUnit.SECONDS);
      cutOff();

      long start = System.nanoTime();
      Boolean acquired =
          waiter
              .call(
                  () -> {
                    try {
                      return second.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (LockUnreachableException e) {
                      return false;
                    }
                  })
              .get(30, TimeUnit.SECONDS);
      assertThat(acquired).isFalse();
      assertWithinBudget(millisSince(start), BUDGET);

      start = System.nanoTime();
      holder.run(first::release).get(30, TimeUnit.SECONDS);
      assertWithinBudget(millisSince(start), Duration.ZERO);
    }
    reconnect(client);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> nodesUnder(LockKind.REENTRANT_MUTEX, path) == 0);
  }

  /** A client that never reached ZooKeeper: timed forms keep their budget, and say why. */
  @Test
  void timedAcquire_onAClientThatNeverConnected_throwsUnreachableWithinItsBudget() {
    TcpProxy closed = TcpProxy.start("127.0.0.1", zk.server().getPort());
    closed.cut();
    CuratorFramework neverConnected =
        newClient(closed.connectString(), new ExponentialBackoffRetry(100, 3));
    try {
      FencedLock lock = new ReentrantMutex(neverConnected, zk.path("lock"));

      long start = System.nanoTime();
      assertThatThrownBy(() -> lock.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS))
          .isInstanceOf(LockUnreachableException.class);
      assertWithinBudget(millisSince(start), BUDGET);
    } finally {
      closed.close();
    }
  }

  /**
   * The same with a namespace: the first use of a namespace makes Curator create its node, with a
   * blocking call that waits for the connection (up to the 10 s connection timeout) in whatever
   * thread resolves a path first. The engine resolves its requests without it, so the budget holds.
   */
  @ParameterizedTest
  @EnumSource(names = {"REENTRANT_MUTEX", "MULTI_MUTEX", "WRITE_LOCK"})
  void timedAcquire_onANamespacedClientThatNeverConnected_keepsItsBudget(LockKind kind) {
    TcpProxy closed = TcpProxy.start("127.0.0.1", zk.server().getPort());
    closed.cut();
    CuratorFramework neverConnected =
        CuratorFrameworkFactory.builder()
            .connectString(closed.connectString())
            .namespace("ns")
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    neverConnected.start();
    closeables.add(neverConnected);
    try {
      FencedLock lock = kind.newLock(neverConnected, "/lock");

      long start = System.nanoTime();
      assertThatThrownBy(() -> lock.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS))
          .isInstanceOf(LockUnreachableException.class);
      assertWithinBudget(millisSince(start), BUDGET);
    } finally {
      closed.close();
    }
  }

  /** An untimed acquire has no budget: it fails, unreachable, once the retry policy gives up. */
  @Test
  void untimedAcquire_whenUnreachable_failsOnceTheRetryPolicyGivesUp() throws Exception {
    CuratorFramework impatient =
        CuratorFrameworkFactory.builder()
            .connectString(proxy.connectString())
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(1_000)
            .retryPolicy(new RetryNTimes(1, 100))
            .ensembleTracker(false)
            .build();
    closeables.add(impatient);
    impatient.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    impatient.start();
    assertThat(impatient.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    FencedLock lock = new ReentrantMutex(impatient, zk.path("lock"));
    states.clear();
    cutOff();

    CompletableFuture<Void> acquire =
        CompletableFuture.runAsync(
            () -> {
              try {
                lock.acquire();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    assertThatThrownBy(() -> acquire.get(60, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockUnreachableException.class);
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
  }
}
