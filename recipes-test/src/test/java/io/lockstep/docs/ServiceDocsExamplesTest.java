package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.reactor.ReactiveLocks;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The examples of {@code docs/services.md}, run against a real ZooKeeper server. */
@Timeout(60)
class ServiceDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final FencedStore orders = new FencedStore();

  @Test
  void hold_withTryWithResources() throws Exception {
    // docs/services.md: hold
    // import io.lockstep.recipes.locks.LockHold;
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore orders = new FencedStore(); // docs: ... your store, see getting-started.md
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
    try (LockHold hold = lock.hold()) {
      orders.write("order-17", "paid", hold.fencingToken());
    } // released here, whichever thread closes it
    // docs: end
    assertThat(orders.read("order-17")).isEqualTo("paid");
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void tryHold_answersBusyWithoutWaitingLong() throws Exception {
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), "/locks/orders");
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    try (LockHold held = other.hold()) {
      assertThat(payOrder(lock)).isEqualTo("busy, try again later");
    }
    assertThat(payOrder(lock)).isEqualTo("paid");
  }

  private String payOrder(ReentrantMutex lock) throws InterruptedException {
    // docs/services.md: try hold
    // import java.time.Duration;
    // import java.util.Optional;

    Optional<LockHold> maybe = lock.tryHold(Duration.ofMillis(200));
    if (maybe.isEmpty()) {
      return "busy, try again later"; // nothing is left queued
    }
    try (LockHold hold = maybe.get()) {
      orders.write("order-17", "paid", hold.fencingToken());
      return "paid";
    }
    // docs: end
  }

  @Test
  void acquireAsync_thenWriteAndClose() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    // docs/services.md: async
    // import java.util.concurrent.CompletableFuture;

    CompletableFuture<String> paid =
        lock.acquireAsync(Duration.ofSeconds(5))
            .thenApply(
                hold -> {
                  try (hold) {
                    orders.write("order-17", "paid", hold.fencingToken());
                    return "paid";
                  }
                })
            .toCompletableFuture();
    // docs: end
    assertThat(paid.get(10, TimeUnit.SECONDS)).isEqualTo("paid");
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void acquireAsync_cancelled_leavesNothing() throws Exception {
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), "/locks/orders");
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    try (LockHold held = other.hold()) {
      // docs/services.md: cancel
      CompletableFuture<LockHold> pending = lock.acquireAsync().toCompletableFuture();
      // ... the request that wanted the lock went away:
      if (!pending.cancel(true) && !pending.isCompletedExceptionally()) { // too late: granted
        pending.join().close(); // the hold is yours to close
      }
      // docs: end
      assertThat(pending).isCancelled();
    }
    zk.assertNothingLeft();
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void acquireAsync_cancelledAfterTheGrant_theExamplesOtherBranchClosesTheHold() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    CompletableFuture<LockHold> pending = lock.acquireAsync().toCompletableFuture();
    LockHold granted = pending.get(10, TimeUnit.SECONDS);
    assertThat(granted.state()).isEqualTo(LockState.HELD);

    // the services.md example once the stage has completed
    if (!pending.cancel(true) && !pending.isCompletedExceptionally()) { // too late: granted
      pending.join().close(); // the hold is yours to close
    }

    assertThat(pending).isCompletedWithValue(granted);
    assertThat(granted.state()).isEqualTo(LockState.RELEASED);
    zk.assertNothingLeft();
  }

  @Test
  void acquireAsync_onTheServicesOwnExecutor() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      // docs/services.md: executor
      // import java.util.concurrent.ExecutorService;

      ExecutorService workers = pool; // docs: ... the service's executor
      CompletableFuture<Void> done =
          lock.acquireAsync(Duration.ofSeconds(5), workers) // completes on workers
              .thenAccept(
                  hold -> {
                    try (hold) {
                      orders.write("order-18", "paid", hold.fencingToken());
                    }
                  })
              .toCompletableFuture();
      // docs: end
      done.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertThat(orders.read("order-18")).isEqualTo("paid");
  }

  @Test
  void lockView_forJavaUtilConcurrentCode() throws Exception {
    CuratorFramework client = zk.newClient();
    // docs/services.md: lock view
    // import java.util.ArrayList;
    // import java.util.List;
    // import java.util.concurrent.locks.Lock;

    List<String> published = new ArrayList<>();
    Lock lock = new ReentrantMutex(client, "/locks/daily-report").asLock();
    lock.lock();
    try {
      published.add("daily report");
    } finally {
      lock.unlock();
    }
    // docs: end
    assertThat(published).containsExactly("daily report");
  }

  @Test
  void keyedLocks_lockAnOrderByItsId() throws Exception {
    CuratorFramework client = zk.newClient();
    // docs/services.md: keyed
    // import io.lockstep.recipes.locks.KeyedLocks;

    String orderId = "order/42"; // docs: ... the order the request is about
    KeyedLocks orderLocks = new KeyedLocks(client, "/locks/orders");
    try (LockHold hold = orderLocks.mutex(orderId).hold()) {
      orders.write(orderId, "shipped", hold.fencingToken());
    }
    // from time to time, for instance in a scheduled task:
    orderLocks.expireUnusedOlderThan(Duration.ofMinutes(10));
    // docs: end
    assertThat(orders.read(orderId)).isEqualTo("shipped");
    assertThat(orderLocks.pathOf(orderId)).isEqualTo("/locks/orders/order%2F42");
  }

  @Test
  void keyedLocks_spreadOverHashedDirectories() throws Exception {
    CuratorFramework client = zk.newClient();
    // docs/services.md: keyed hashed
    // import io.lockstep.recipes.locks.KeyLayout;

    KeyedLocks accountLocks = new KeyedLocks(client, "/locks/accounts", KeyLayout.hashed(2));
    String lockPath = accountLocks.pathOf("account-42"); // "/locks/accounts/be/78/account-42"
    // docs: end
    assertThat(lockPath).isEqualTo("/locks/accounts/be/78/account-42");
    try (LockHold hold = accountLocks.mutex("account-42").hold()) {
      assertThat(client.getChildren().forPath(lockPath)).hasSize(1);
    }
  }

  @Test
  void localHandoff_threadsOfOneServiceShareOnePlace() throws Exception {
    CuratorFramework client = zk.newClient();
    ExecutorService workers = Executors.newFixedThreadPool(4);
    try {
      // docs/services.md: local handoff
      // import java.util.concurrent.CopyOnWriteArrayList;
      // import java.util.concurrent.Future;

      List<String> processed = new CopyOnWriteArrayList<>();
      ReentrantMutex lock =
          ReentrantMutex.builder(client, "/locks/inventory").localHandoff(8).build();
      List<Future<?>> batches = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        batches.add(
            workers.submit(
                () -> {
                  try (LockHold hold = lock.hold()) { // the threads take turns on one node
                    processed.add("batch");
                  }
                  return null;
                }));
      }
      // docs: end
      for (Future<?> batch : batches) {
        batch.get(30, TimeUnit.SECONDS);
      }
      assertThat(processed).hasSize(4);
      try (LockHold hold = lock.hold()) { // the place is ZooKeeper's: one node in the directory
        assertThat(client.getChildren().forPath("/locks/inventory")).hasSize(1);
      }
    } finally {
      workers.shutdownNow();
    }
    // The directory is a container; the server may reap it once empty, so look at what is in it.
    Stat dir = client.checkExists().forPath("/locks/inventory");
    if (dir != null) {
      assertThat(dir.getNumChildren()).as("nodes left behind").isZero();
    }
  }

  @Test
  void linger_aLockTakenAgainAndAgain_keepsItsPlace() throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> processed = new ArrayList<>();
    // docs/services.md: linger
    // import java.time.Duration;

    ReentrantMutex reportLock =
        ReentrantMutex.builder(client, "/locks/report").linger(Duration.ofMinutes(5)).build();
    for (int i = 0; i < 3; i++) {
      try (LockHold hold = reportLock.hold()) { // after the first: held in memory, no request
        processed.add("report");
      }
    }
    // docs: end
    assertThat(processed).hasSize(3);
    assertThat(reportLock.getParticipantNodes()).as("the kept place").hasSize(1);
    client.close(); // gives the kept place back
  }

  @Test
  void linger_closeTheLockObjectToGiveThePlaceBackNow() throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> processed = new ArrayList<>();
    // docs/services.md: linger close
    ReentrantMutex nightly =
        ReentrantMutex.builder(client, "/locks/nightly").linger(Duration.ofMinutes(5)).build();
    try (LockHold hold = nightly.hold()) {
      processed.add("nightly");
    }
    nightly.close(); // the kept place goes back now, not in five minutes
    // docs: end
    assertThat(processed).containsExactly("nightly");
    await("given back").until(() -> nightly.getParticipantNodes().isEmpty());
    assertThatThrownBy(nightly::acquire).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void onLost_stopTheWorkAndClose() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/batches");
    CountDownLatch lost = new CountDownLatch(1);
    lock.getStateListenable()
        .addListener(
            change -> {
              if (change.state() == LockState.LOST) {
                lost.countDown();
              }
            });
    List<String> work = new AbstractList<>() { // the test's fault: the session expires after b1
          @Override
          public String get(int index) {
            if (index == 1) {
              try {
                Sessions.expire(client, zk.server().getConnectString());
                assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            }
            return "b" + (index + 1);
          }

          @Override
          public int size() {
            return 3;
          }
        };
    assertThatThrownBy(
            () -> {
              // docs/services.md: on lost
              List<String> batches = work; // docs: ... the work, in batches
              try (LockHold hold = lock.hold()) {
                for (String batch : batches) {
                  hold.checkHeld(); // throws LockOwnershipLostException once the hold is lost
                  orders.write(batch, "done", hold.fencingToken());
                }
              } // closing a lost hold clears it, and does not throw
              // docs: end
            })
        .isInstanceOf(LockOwnershipLostException.class);
    assertThat(orders.read("b1")).isEqualTo("done");
    assertThat(orders.read("b2")).isNull();
    zk.skipLeakCheck();
  }

  @Test
  void whenLost_stopsTheWorkTheHoldProtects() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      // docs/services.md: when lost
      // import java.util.concurrent.Future;

      ExecutorService workers = pool; // docs: ... the service's executor
      try (LockHold hold = lock.hold()) {
        Future<?> report = workers.submit(() -> orders.write("report", "v1", hold.fencingToken()));
        hold.whenLost().thenRun(() -> report.cancel(true)); // stops the work if the hold is lost
        report.get();
      }
      // docs: end
    } finally {
      pool.shutdownNow();
    }
    assertThat(orders.read("report")).isEqualTo("v1");
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void reactor_withLock_runsTheBodyUnderTheLock() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), "/locks/orders");
    // docs/services.md: reactor
    // import io.lockstep.recipes.reactor.ReactiveLocks;
    // import reactor.core.publisher.Flux;
    // import reactor.core.publisher.Mono;

    Flux<Long> paid =
        ReactiveLocks.withLock(
            lock,
            hold ->
                Mono.fromCallable(
                    () -> {
                      orders.write("order-18", "paid", hold.fencingToken());
                      return hold.fencingToken();
                    }));
    Long token = paid.blockLast();
    // docs: end
    assertThat(token).isPositive();
    assertThat(orders.read("order-18")).isEqualTo("paid");
    await().until(() -> lock.getParticipantNodes().isEmpty());
  }
}
