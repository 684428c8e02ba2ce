package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 32, defect 4: a timed call ends "unreachable" only when ZooKeeper really was out of reach.
 * A live connection that answers slowly, and a first connection that completes within the grace,
 * give the ordinary outcome ({@code false}, or the grant), as Curator's would; code written for
 * Curator ({@code if (!lock.acquire(5, MILLISECONDS)) skip}) must not crash. A silent partition
 * reads as slow until the client notices it, and as unreachable from then on.
 */
@Timeout(120)
class SlowIsNotUnreachableTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** What the tests allow above a budget: the 200 ms grace, the rest for a loaded machine. */
  private static final long MARGIN_MILLIS = 1_000;

  private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();
  private TcpProxy proxy;

  @BeforeEach
  void startProxy() {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
  }

  @AfterEach
  void closeAll() {
    proxy.heal();
    clients.forEach(CloseableUtils::closeQuietly);
  }

  private CuratorFramework started(String connectString, int sessionTimeoutMs) {
    return started(connectString, sessionTimeoutMs, new AtomicLong());
  }

  /** A started client; {@code connectedAt} gets the time of its first connection. */
  private CuratorFramework started(
      String connectString, int sessionTimeoutMs, AtomicLong connectedAt) {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(sessionTimeoutMs)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    client
        .getConnectionStateListenable()
        .addListener(
            (c, state) -> {
              if (state == ConnectionState.CONNECTED) {
                connectedAt.compareAndSet(0, System.nanoTime());
              }
            });
    client.start();
    clients.add(client);
    return client;
  }

  private CuratorFramework connected(String connectString, int sessionTimeoutMs)
      throws InterruptedException {
    CuratorFramework client = started(connectString, sessionTimeoutMs);
    assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    return client;
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  /** Every round trip takes at least 600 ms: far longer than a 5 ms budget and the grace. */
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void timedAcquire_onASlowLiveConnection_returnsFalse_notUnreachable(LockKind kind)
      throws Exception {
    CuratorFramework client = connected(proxy.connectString(), 30_000);
    FencedLock lock = kind.newLock(client, zk.path("lock"));
    proxy.setLatency(300);

    long start = System.nanoTime();
    assertThat(lock.acquire(5, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(millisSince(start)).isLessThan(5 + MARGIN_MILLIS);

    assertThatThrownBy(() -> lock.acquireAsync(Duration.ofMillis(5)).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(TimeoutException.class);
    assertThat(lock.asLock().tryLock(5, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(client.getZookeeperClient().isConnected()).as("connected throughout").isTrue();

    proxy.setLatency(0);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("granted once answers are quick").isTrue();
    lock.release();
  }

  /**
   * A client just started, not connected yet: a timed acquire waits the grace for the first
   * connection and takes the free lock, or says it is busy; "unreachable" only if the first
   * connection came after the grace (a machine loaded enough to connect that slowly).
   */
  @Test
  void timedAcquire_rightAfterStart_givesTheOrdinaryOutcome() throws Exception {
    int granted = 0;
    for (int i = 0; i < 10; i++) {
      AtomicLong connectedAt = new AtomicLong();
      CuratorFramework client = started(zk.server().getConnectString(), 30_000, connectedAt);
      ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
      long start = System.nanoTime();
      boolean acquired;
      try {
        acquired = lock.acquire(5, TimeUnit.MILLISECONDS);
      } catch (LockUnreachableException unreachable) {
        long connected = connectedAt.get();
        // The budget (5 ms) and the grace (200 ms), less what the listeners' order may blur.
        assertThat(connected == 0 || connected - start > TimeUnit.MILLISECONDS.toNanos(100))
            .as(
                "unreachable, though the first connection came %d ms after the call",
                TimeUnit.NANOSECONDS.toMillis(connected - start))
            .isTrue();
        client.close();
        continue;
      }
      assertThat(millisSince(start)).isLessThan(5 + MARGIN_MILLIS);
      if (acquired) {
        granted++;
        lock.release();
      }
      client.close();
    }
    assertThat(granted).as("free lock, connection within the grace: granted mostly").isPositive();
  }

  /**
   * Five clients of three threads each on one server, untimed acquires mixed with budgets of 0 to
   * 500 ms: every client stays connected, so no call may say "unreachable".
   */
  @Test
  void underLoad_withEveryClientConnected_noCallSaysUnreachable() throws Exception {
    List<CuratorFramework> fleet = new ArrayList<>();
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      CuratorFramework client = connected(zk.server().getConnectString(), 30_000);
      client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
      fleet.add(client);
    }
    AtomicInteger acquired = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    List<Throwable> unreachable = new CopyOnWriteArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
    ExecutorService threads = Executors.newFixedThreadPool(15);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (CuratorFramework client : fleet) {
        for (int t = 0; t < 3; t++) {
          ReentrantMutex lock = new ReentrantMutex(client, zk.path("busy"));
          workers.add(
              threads.submit(
                  () -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (System.nanoTime() < end) {
                      try {
                        boolean held;
                        if (random.nextInt(4) == 0) {
                          lock.acquire();
                          held = true;
                        } else {
                          held = lock.acquire(random.nextInt(501), TimeUnit.MILLISECONDS);
                        }
                        if (held) {
                          acquired.incrementAndGet();
                          lock.release();
                        } else {
                          timedOut.incrementAndGet();
                        }
                      } catch (LockUnreachableException e) {
                        unreachable.add(e);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> worker : workers) {
        worker.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(states)
        .as("every client stayed connected")
        .doesNotContain(ConnectionState.SUSPENDED, ConnectionState.LOST);
    assertThat(acquired.get()).isPositive();
    assertThat(timedOut.get()).as("a contended lock: some budgets ran out").isPositive();
    assertThat(unreachable).as("false unreachables").isEmpty();
  }

  /**
   * A silent partition: until the client's read timeout (two thirds of its 3 s session) it believes
   * it is connected and a timed acquire says "busy"; once it has noticed, "unreachable".
   */
  @Test
  void silentPartition_readsAsSlowUntilTheClientNotices_thenUnreachable() throws Exception {
    CuratorFramework client = connected(proxy.connectString(), 3_000);
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    proxy.blackhole();

    long start = System.nanoTime();
    assertThat(lock.acquire(5, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(millisSince(start)).isLessThan(5 + MARGIN_MILLIS);

    await().atMost(Duration.ofSeconds(10)).until(() -> states.contains(ConnectionState.SUSPENDED));
    start = System.nanoTime();
    assertThatThrownBy(() -> lock.acquire(100, TimeUnit.MILLISECONDS))
        .isInstanceOf(LockUnreachableException.class);
    assertThat(millisSince(start)).isLessThan(100 + MARGIN_MILLIS);

    proxy.heal();
    zk.skipLeakCheck(); // the 3 s session may have ended with the partition; its nodes with it
    CuratorFramework reader = zk.newClient();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> ZooKeeperExtension.childrenOrNone(reader, zk.path("lock")).isEmpty());
  }
}
