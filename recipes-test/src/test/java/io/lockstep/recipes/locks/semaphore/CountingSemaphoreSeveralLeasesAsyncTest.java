package io.lockstep.recipes.locks.semaphore;

import static io.lockstep.recipes.locks.semaphore.CountingSemaphoreTest.children;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CountingSemaphore#acquireAsync(int, Duration)}: several leases at once, all or none, with
 * no thread waiting. Its stage completes with every lease once enough are free; when the budget
 * runs out, or the caller cancels, or the semaphore object is closed, the leases it took on the way
 * go back and its mutex node goes; a refused executor fails the stage and gives the leases back.
 * After every test the extension checks that no ephemeral node and no watch is left.
 */
@Timeout(60)
class CountingSemaphoreSeveralLeasesAsyncTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  @Test
  void severalLeases_completeTogether_onceEnoughAreFree() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<LockHold> held = heldElsewhere(3, 2);
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);

    CompletableFuture<List<LockHold>> three =
        semaphore.acquireAsync(3, Duration.ofSeconds(30)).toCompletableFuture();
    awaitNodes(admin, 4, 1); // with the mutex: the free lease granted, the next one waiting
    held.get(0).close();
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> !three.isDone());
    held.get(1).close();

    List<LockHold> leases = three.get(10, TimeUnit.SECONDS);
    assertThat(leases).hasSize(3).extracting(LockHold::state).containsOnly(LockState.HELD);
    assertThat(leases).extracting(LockHold::fencingToken).doesNotHaveDuplicates();
    assertThat(semaphore.availablePermits()).isZero();
    assertThat(children(admin, zk.path("sem/locks"))).as("the mutex let go").isZero();
    leases.forEach(LockHold::close);
    assertThat(semaphore.availablePermits()).isEqualTo(3);
  }

  @Test
  void aFreeSemaphore_grantsSeveralLeasesAsync_withoutQueueing() throws Exception {
    CuratorFramework admin = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 4);

    List<LockHold> leases =
        semaphore
            .acquireAsync(4, Duration.ofSeconds(10))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);

    assertThat(leases).hasSize(4);
    assertThat(admin.checkExists().forPath(zk.path("sem/locks"))).as("never queued").isNull();
    leases.forEach(LockHold::close);
  }

  @Test
  void aBudgetThatRunsOut_failsWithATimeout_andGivesBackTheLeasesItTook() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<LockHold> held = heldElsewhere(3, 2);
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);

    CompletableFuture<List<LockHold>> two =
        semaphore.acquireAsync(2, Duration.ofMillis(500)).toCompletableFuture();

    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(TimeoutException.class);
    awaitNodes(admin, 2, 0); // its granted and its waiting lease went back, and its mutex node
    held.forEach(LockHold::close);
  }

  @Test
  void aCancel_withdrawsTheRequest_andGivesBackTheLeasesItTook_butNotAfterTheGrant()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    List<LockHold> held = heldElsewhere(3, 2);
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
    CompletableFuture<List<LockHold>> cancelled =
        semaphore.acquireAsync(3, Duration.ofMinutes(1)).toCompletableFuture();
    awaitNodes(admin, 4, 1); // with the mutex: the free lease granted, the next one waiting

    assertThat(cancelled.cancel(true)).isTrue();

    awaitNodes(admin, 2, 0); // its granted and its waiting lease went back, and its mutex node
    held.forEach(LockHold::close);

    CompletableFuture<List<LockHold>> granted =
        semaphore.acquireAsync(3, Duration.ofSeconds(10)).toCompletableFuture();
    List<LockHold> leases = granted.get(10, TimeUnit.SECONDS);
    assertThat(granted.cancel(true)).as("a cancel once granted does nothing").isFalse();
    assertThat(leases).extracting(LockHold::state).containsOnly(LockState.HELD);
    assertThat(children(admin, zk.path("sem/leases"))).isEqualTo(3);
    leases.forEach(LockHold::close);
  }

  @Test
  void theStage_completesOnTheCallersExecutor() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "callers"));
    try {
      LockHold held = heldElsewhere(2, 1).get(0);
      CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 2);
      CompletableFuture<List<LockHold>> two =
          semaphore.acquireAsync(2, Duration.ofSeconds(30), executor).toCompletableFuture();
      CompletableFuture<String> completedOn = two.thenApply(l -> Thread.currentThread().getName());
      assertThat(two).as("a lease is still held").isNotDone();

      held.close();

      assertThat(completedOn.get(10, TimeUnit.SECONDS)).isEqualTo("callers");
      two.join().forEach(LockHold::close);
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void aRefusingExecutor_failsTheStage_andTheLeasesGoBack() throws Exception {
    CuratorFramework admin = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 2);
    RejectedExecutionException refusal = new RejectedExecutionException("full");

    CompletableFuture<List<LockHold>> two =
        semaphore
            .acquireAsync(
                2,
                Duration.ofSeconds(10),
                task -> {
                  throw refusal;
                })
            .toCompletableFuture();

    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCause(refusal);
    awaitNodes(admin, 0, 0); // both leases given back
  }

  /**
   * The grant racing a cancel: every lease is granted and the completion is on its way to the
   * caller's executor when the caller cancels. The cancel wins (the stage is cancelled), and the
   * leases the stage no longer takes go back rather than stay held by nobody.
   */
  @Test
  void aCancelThatWinsTheRaceWithTheGrant_givesTheGrantedLeasesBack() throws Exception {
    CuratorFramework admin = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 3);
    BlockingQueue<Runnable> completions = new LinkedBlockingQueue<>();

    CompletableFuture<List<LockHold>> two =
        semaphore.acquireAsync(2, Duration.ofSeconds(10), completions::add).toCompletableFuture();
    Runnable completion = completions.poll(10, TimeUnit.SECONDS);
    assertThat(completion).as("the grant's completion, held back").isNotNull();
    assertThat(children(admin, zk.path("sem/leases"))).as("both granted").isEqualTo(2);

    assertThat(two.cancel(true)).isTrue();
    completion.run();

    assertThat(two).isCancelled();
    awaitNodes(admin, 0, 0); // the granted leases went back
    assertThat(semaphore.availablePermits()).isEqualTo(3);
  }

  @Test
  void closingTheSemaphore_withdrawsTheRequest_andRefusesNewOnes() throws Exception {
    CuratorFramework admin = zk.newClient();
    LockHold held = heldElsewhere(2, 1).get(0);
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 2);
    CompletableFuture<List<LockHold>> two =
        semaphore.acquireAsync(2, Duration.ofMinutes(1)).toCompletableFuture();
    awaitNodes(admin, 3, 1); // with the mutex: the free lease granted, the next one waiting

    semaphore.close();

    assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> semaphore.acquireAsync(1, Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    awaitNodes(admin, 1, 0); // its granted and its waiting lease went back, and its mutex node
    held.close();
  }

  @Test
  void badInput_isRefused_namingTheArgument_andNothingIsCreated() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 2);
    Duration budget = Duration.ofSeconds(1);

    assertThatThrownBy(() -> semaphore.acquireAsync(0, budget))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qty");
    assertThatThrownBy(() -> semaphore.acquireAsync(3, budget))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qty");
    assertThatThrownBy(() -> semaphore.acquireAsync(1, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> semaphore.acquireAsync(1, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> semaphore.acquireAsync(1, budget, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("executor");
    assertThatThrownBy(() -> semaphore.acquireAsync(3, budget, Runnable::run))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qty");
    assertThat(client.checkExists().forPath(zk.path("sem"))).isNull();
  }

  /** {@code count} leases of {@code maxLeases}, held by another client. */
  private static List<LockHold> heldElsewhere(int maxLeases, int count) throws Exception {
    CountingSemaphore holder = new CountingSemaphore(zk.newClient(), zk.path("sem"), maxLeases);
    return holder.tryHold(count, Duration.ofSeconds(5));
  }

  /** Waits until the semaphore's directories hold that many lease and mutex nodes. */
  private static void awaitNodes(CuratorFramework admin, int leases, int locks) {
    String leasesPath = zk.path("sem/leases");
    String locksPath = zk.path("sem/locks");
    await(leases + " lease nodes and " + locks + " mutex nodes")
        .atMost(Duration.ofSeconds(10))
        .until(() -> children(admin, leasesPath) == leases && children(admin, locksPath) == locks);
  }
}
