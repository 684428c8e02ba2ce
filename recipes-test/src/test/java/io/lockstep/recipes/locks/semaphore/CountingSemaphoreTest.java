package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CountingSemaphore} on a real server: at most {@code maxLeases} holders among many clients,
 * waiters served in arrival order, several leases at once, free permits, asynchronous acquires and
 * their cancellation, the zero budget, bad input, fencing tokens. After every test the extension
 * checks that no lease node, no mutex node and no watch is left.
 */
@Timeout(60)
class CountingSemaphoreTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  @Test
  void manyClients_neverHoldMoreThanMaxLeases_andAllOfThemGetTheirTurns() throws Exception {
    int max = 3;
    List<CuratorFramework> clients = zk.newClients(4);
    AtomicInteger holding = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger acquired = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        CountingSemaphore semaphore =
            new CountingSemaphore(clients.get(t % clients.size()), zk.path("sem"), max);
        workers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 10; i++) {
                    try (LockHold lease = semaphore.acquire()) {
                      int now = holding.incrementAndGet();
                      most.accumulateAndGet(now, Math::max);
                      lease.checkHeld();
                      Thread.onSpinWait();
                      holding.decrementAndGet();
                      acquired.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(45, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(most.get()).isBetween(1, max);
    assertThat(acquired.get()).isEqualTo(80);
    assertThat(new CountingSemaphore(clients.get(0), zk.path("sem"), max).availablePermits())
        .isEqualTo(max);
  }

  @Test
  void waiters_areGrantedInTheOrderTheyQueued() throws Exception {
    CuratorFramework holderClient = zk.newClient();
    CountingSemaphore holder = new CountingSemaphore(holderClient, zk.path("sem"), 1);
    LockHold held = holder.acquire();
    List<String> order = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      String name = "w" + i;
      CountingSemaphore waiter = new CountingSemaphore(zk.newClient(), zk.path("sem"), 1);
      done.add(
          waiter
              .acquireAsync(Duration.ofSeconds(30))
              .thenAccept(
                  lease -> {
                    order.add(name);
                    lease.close();
                  })
              .toCompletableFuture());
      int queued = i;
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> children(holderClient, zk.path("sem/locks")) == queued);
    }
    held.close();
    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
    assertThat(order).containsExactly("w1", "w2", "w3");
  }

  @Test
  void severalLeases_areTakenTogether_orNoneWhenTheyDoNotFitInTheBudget() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 5);
    List<LockHold> three = semaphore.tryHold(3, Duration.ofSeconds(5));
    assertThat(three).hasSize(3);
    assertThat(semaphore.availablePermits()).isEqualTo(2);
    assertThat(semaphore.getParticipantNodes()).hasSize(3);

    CountingSemaphore other = new CountingSemaphore(zk.newClient(), zk.path("sem"), 5);
    assertThat(other.tryHold(3, Duration.ofMillis(300))).isEmpty();
    // the two free leases it took on the way were given back, and nothing else is left
    assertThat(children(client, zk.path("sem/leases"))).isEqualTo(3);
    assertThat(children(client, zk.path("sem/locks"))).isZero();
    assertThat(semaphore.availablePermits()).isEqualTo(2);

    List<LockHold> two = other.tryHold(2, Duration.ofSeconds(5));
    assertThat(two).hasSize(2);
    assertThat(semaphore.availablePermits()).isZero();
    three.forEach(LockHold::close);
    two.forEach(LockHold::close);
    assertThat(semaphore.availablePermits()).isEqualTo(5);
  }

  @Test
  void aWaitingQtyRequest_isGrantedWhenEnoughLeasesReturn() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
    List<LockHold> held = semaphore.tryHold(2, Duration.ofSeconds(5));
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
    CompletableFuture<List<LockHold>> waiting =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return other.tryHold(3, Duration.ofSeconds(20));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> !waiting.isDone());
    held.get(0).close();
    assertThat(waiting).isNotDone();
    held.get(1).close();
    List<LockHold> all = waiting.get(10, TimeUnit.SECONDS);
    assertThat(all).hasSize(3).extracting(LockHold::state).containsOnly(LockState.HELD);
    all.forEach(LockHold::close);
  }

  @Test
  void twoRequestsForSeveralLeases_neverHoldSomeWhileQueueing_soBothAreGranted() throws Exception {
    CuratorFramework observer = zk.newClient();
    CountingSemaphore holder = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
    LockHold held = holder.acquire();
    List<CompletableFuture<List<LockHold>>> requests = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
      requests.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return semaphore.tryHold(3, Duration.ofSeconds(20));
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              }));
    }
    // one waits holding the mutex (two leases granted, its third waiting beside the holder's),
    // the other queues for the mutex holding no lease
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                children(observer, zk.path("sem/locks")) == 2
                    && children(observer, zk.path("sem/leases")) == 4);
    held.close();
    List<LockHold> first =
        (List<LockHold>)
            CompletableFuture.anyOf(requests.toArray(CompletableFuture[]::new))
                .get(10, TimeUnit.SECONDS);
    assertThat(first).hasSize(3);
    first.forEach(LockHold::close);
    for (CompletableFuture<List<LockHold>> request : requests) {
      List<LockHold> leases = request.get(10, TimeUnit.SECONDS);
      assertThat(leases).hasSize(3);
      if (leases != first) {
        leases.forEach(LockHold::close);
      }
    }
  }

  @Test
  void asyncAcquire_completesWhenALeaseReturns_andCancellingItLeavesNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    LockHold held = semaphore.acquire();

    CountingSemaphore other = new CountingSemaphore(zk.newClient(), zk.path("sem"), 1);
    CompletionStage<LockHold> cancelled = other.acquireAsync(Duration.ofMinutes(1));
    await().atMost(Duration.ofSeconds(5)).until(() -> children(client, zk.path("sem/locks")) == 1);
    assertThat(cancelled.toCompletableFuture().cancel(true)).isTrue();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                children(client, zk.path("sem/locks")) == 0
                    && children(client, zk.path("sem/leases")) == 1);

    CompletableFuture<LockHold> granted =
        other.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await().atMost(Duration.ofSeconds(5)).until(() -> children(client, zk.path("sem/locks")) == 1);
    assertThat(granted).isNotDone();
    held.close();
    LockHold lease = granted.get(10, TimeUnit.SECONDS);
    assertThat(lease.state()).isEqualTo(LockState.HELD);
    assertThat(children(client, zk.path("sem/leases"))).isEqualTo(1);
    lease.close();
    assertThat(semaphore.availablePermits()).isEqualTo(1);
  }

  @Test
  void asyncAcquire_failsWithATimeout_whenNoLeaseReturnsInTime() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    LockHold held = semaphore.acquire();
    CompletableFuture<LockHold> late =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 1)
            .acquireAsync(Duration.ofMillis(300))
            .toCompletableFuture();
    assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(TimeoutException.class);
    assertThat(children(client, zk.path("sem/leases"))).isEqualTo(1);
    assertThat(children(client, zk.path("sem/locks"))).isZero();
    held.close();
  }

  @Test
  void aZeroBudget_takesAFreeLeaseAtOnce_orReturnsEmptyWithoutQueueing() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 2);
    Optional<LockHold> first =
        ZeroBudgetTry.granted(
            "the first lease",
            () -> semaphore.tryHold(Duration.ZERO),
            Optional::isPresent,
            () -> semaphore.tryHold(Duration.ofSeconds(10)));
    Optional<LockHold> second =
        ZeroBudgetTry.granted(
            "the second lease",
            () -> semaphore.tryHold(Duration.ZERO),
            Optional::isPresent,
            () -> semaphore.tryHold(Duration.ofSeconds(10)));
    long start = System.nanoTime();
    assertThat(semaphore.tryHold(Duration.ZERO)).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1_500));
    assertThat(client.checkExists().forPath(zk.path("sem/locks"))).isNull(); // never queued
    assertThat(children(client, zk.path("sem/leases"))).isEqualTo(2);
    first.get().close();
    second.get().close();
  }

  @Test
  void fencingTokens_growFromOneLeaseToTheNext() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 1);
    long last = 0;
    for (int i = 0; i < 5; i++) {
      try (LockHold lease = semaphore.acquire()) {
        assertThat(lease.fencingToken()).isGreaterThan(last);
        assertThat(lease.path()).isEqualTo(zk.path("sem"));
        assertThat(lease.ownershipChecks()).hasSize(1);
        last = lease.fencingToken();
      }
    }
  }

  @Test
  void badInput_isRefused_namingTheArgument_andNothingIsCreated() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("sem");
    assertThatThrownBy(() -> new CountingSemaphore(null, path, 1))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> new CountingSemaphore(client, null, 1))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("path");
    assertThatThrownBy(() -> new CountingSemaphore(client, "no-slash", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("path");
    assertThatThrownBy(() -> new CountingSemaphore(client, path, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxLeases");
    CountingSemaphore semaphore = new CountingSemaphore(client, path, 2);
    assertThatThrownBy(() -> semaphore.tryHold(0, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qty");
    assertThatThrownBy(() -> semaphore.tryHold(3, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qty");
    assertThatThrownBy(() -> semaphore.tryHold(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> semaphore.tryHold(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> semaphore.acquireAsync(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> semaphore.tryHold(1, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThat(client.checkExists().forPath(path)).isNull();
  }

  @Test
  void availablePermits_ofAnUnusedPath_isMaxLeases_andSendsNoWrite() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 4);
    assertThat(semaphore.availablePermits()).isEqualTo(4);
    assertThat(semaphore.getParticipantNodes()).isEmpty();
    assertThat(client.checkExists().forPath(zk.path("sem"))).isNull();
  }

  /**
   * The child watches on the server: {@code mntr}'s watch count less the data watches {@code wchp}
   * lists ({@code wchp} and {@code wchc} list data watches only, so the extension's leak check
   * cannot see a child watch left behind).
   */
  static long childWatches(ZooKeeperExtension zk) {
    long all = zk.stats().monitor("zk_watch_count");
    long data = zk.stats().watchesByPath().values().stream().mapToLong(List::size).sum();
    return all - data;
  }

  /** Waits until no child watch is left on the server. */
  static void assertNoChildWatchLeft(ZooKeeperExtension zk) {
    await("no child watch left")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(childWatches(zk)).isZero());
  }

  static int children(CuratorFramework client, String path) throws Exception {
    try {
      return client.getChildren().forPath(path).size();
    } catch (org.apache.zookeeper.KeeperException.NoNodeException none) {
      return 0;
    }
  }
}
