package io.lockstep.recipes.locks.semaphore;

import static io.lockstep.recipes.locks.semaphore.CountingSemaphoreTest.children;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling upgrade: Curator 5.9.0's {@code InterProcessSemaphoreV2} and {@link CountingSemaphore}
 * on one path share the leases, wait for each other without deadlock, and cost what they cost.
 */
@Timeout(90)
class CountingSemaphoreInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  @Test
  void ourNodes_haveCuratorsLayout() throws Exception {
    CuratorFramework client = zk.newClient();
    try (LockHold lease = new CountingSemaphore(client, zk.path("sem"), 2).acquire()) {
      assertThat(client.getChildren().forPath(zk.path("sem/leases")))
          .singleElement()
          .asString()
          .matches("_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lease-\\d{10}");
      assertThat(lease.path()).isEqualTo(zk.path("sem"));
    }
  }

  @Test
  void curatorAndLockstepLeases_shareMaxLeases_inBothDirections() throws Exception {
    String path = zk.path("sem");
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(zk.newClient(), path, 3);
    CountingSemaphore ours = new CountingSemaphore(zk.newClient(), path, 3);

    Collection<Lease> curatorLeases = curator.acquire(2);
    List<LockHold> ourLeases = ours.tryHold(1, Duration.ofSeconds(5));
    assertThat(ours.tryHold(Duration.ofMillis(300))).isEmpty();
    assertThat(curator.acquire(300, TimeUnit.MILLISECONDS)).isNull();
    assertThat(ours.availablePermits()).isZero();

    curator.returnAll(curatorLeases);
    List<LockHold> two = ours.tryHold(2, Duration.ofSeconds(5));
    assertThat(two).hasSize(2);
    assertThat(curator.acquire(300, TimeUnit.MILLISECONDS)).isNull();
    ourLeases.get(0).close();
    Lease curatorLease = curator.acquire(5, TimeUnit.SECONDS);
    assertThat(curatorLease).isNotNull();
    assertThat(ours.tryHold(Duration.ZERO)).isEmpty();
    curator.returnLease(curatorLease);
    two.forEach(LockHold::close);
    assertThat(ours.availablePermits()).isEqualTo(3);
  }

  @Test
  void threeCuratorAndThreeLockstepHolders_withMaxThree_cannotAllHold() throws Exception {
    String path = zk.path("sem");
    List<InterProcessSemaphoreV2> curators = new ArrayList<>();
    List<CountingSemaphore> ours = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      curators.add(new InterProcessSemaphoreV2(zk.newClient(), path, 3));
      ours.add(new CountingSemaphore(zk.newClient(), path, 3));
    }
    List<Lease> curatorLeases = new ArrayList<>();
    List<LockHold> ourLeases = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Lease lease = curators.get(i).acquire(200, TimeUnit.MILLISECONDS);
      if (lease != null) {
        curatorLeases.add(lease);
      }
      ours.get(i).tryHold(Duration.ofMillis(200)).ifPresent(ourLeases::add);
    }
    assertThat(curatorLeases.size() + ourLeases.size()).isEqualTo(3);
    curatorLeases.forEach(lease -> curators.get(0).returnLease(lease));
    ourLeases.forEach(LockHold::close);
  }

  @Test
  void aCuratorWaiterAndALockstepWaiterAtOnce_bothGetLeasesAsTheyReturn_noDeadlock()
      throws Exception {
    String path = zk.path("sem");
    CuratorFramework observer = zk.newClient();
    CountingSemaphore holder = new CountingSemaphore(zk.newClient(), path, 2);
    List<LockHold> held = holder.tryHold(2, Duration.ofSeconds(5));
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(zk.newClient(), path, 2);
    CountingSemaphore ours = new CountingSemaphore(zk.newClient(), path, 2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      CompletableFuture<Lease> curatorWaiter =
          CompletableFuture.supplyAsync(() -> curatorAcquire(curator, 30), pool);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> children(observer, zk.path("sem/locks")) == 1);
      CompletableFuture<Optional<LockHold>> ourWaiter =
          CompletableFuture.supplyAsync(() -> ourAcquire(ours, 30), pool);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> children(observer, zk.path("sem/locks")) == 2);

      held.get(0).close();
      Lease curatorLease = curatorWaiter.get(10, TimeUnit.SECONDS); // it queued first
      assertThat(ourWaiter).isNotDone();
      held.get(1).close();
      LockHold ourLease = ourWaiter.get(10, TimeUnit.SECONDS).orElseThrow();
      assertThat(children(observer, zk.path("sem/leases"))).isEqualTo(2);
      curator.returnLease(curatorLease);
      ourLease.close();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aLockstepWaiterAheadOfACuratorWaiter_isServedFirst_thenCurators() throws Exception {
    String path = zk.path("sem");
    CuratorFramework observer = zk.newClient();
    InterProcessSemaphoreV2 holder = new InterProcessSemaphoreV2(zk.newClient(), path, 1);
    Lease held = holder.acquire();
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(zk.newClient(), path, 1);
    CountingSemaphore ours = new CountingSemaphore(zk.newClient(), path, 1);
    ExecutorService pool = Executors.newFixedThreadPool(1);
    try {
      CompletableFuture<LockHold> ourWaiter =
          ours.acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> children(observer, zk.path("sem/locks")) == 1);
      CompletableFuture<Lease> curatorWaiter =
          CompletableFuture.supplyAsync(() -> curatorAcquire(curator, 30), pool);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> children(observer, zk.path("sem/locks")) == 2);

      holder.returnLease(held);
      LockHold ourLease = ourWaiter.get(10, TimeUnit.SECONDS);
      assertThat(curatorWaiter).isNotDone();
      ourLease.close();
      curator.returnLease(curatorWaiter.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void uncontendedAcquireAndRelease_costsThreeRequests_whereCuratorsCostsSeven() throws Exception {
    String ourPath = zk.path("ours");
    String curatorPath = zk.path("curator");
    CuratorFramework setup = zk.newClient();
    // Persistent directories: a reaped container would add its re-creation to some cycles.
    for (String dir :
        List.of(ourPath + "/leases", curatorPath + "/leases", curatorPath + "/locks")) {
      setup.create().creatingParentsIfNeeded().forPath(dir);
    }
    int cycles = 10;

    CuratorFramework ourClient = zk.newClient();
    CountingSemaphore ours = new CountingSemaphore(ourClient, ourPath, 2);
    long before = zk.requestsSoFar(ourClient);
    for (int i = 0; i < cycles; i++) {
      ours.acquire().close();
    }
    long ourRequests = zk.requestsSoFar(ourClient) - before;

    CuratorFramework curatorClient = zk.newClient();
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(curatorClient, curatorPath, 2);
    before = zk.requestsSoFar(curatorClient);
    for (int i = 0; i < cycles; i++) {
      curator.returnLease(curator.acquire());
    }
    long curatorRequests = zk.requestsSoFar(curatorClient) - before;

    assertThat(ourRequests).isEqualTo(3L * cycles);
    assertThat(curatorRequests).isEqualTo(7L * cycles);
  }

  @Test
  void aFastTryThatFindsNoFreeLease_costsThreeRequests_andArmsNoWatch() throws Exception {
    String path = zk.path("sem");
    CountingSemaphore holder = new CountingSemaphore(zk.newClient(), path, 1);
    LockHold held = holder.acquire();
    CuratorFramework client = zk.newClient();
    CountingSemaphore ours = new CountingSemaphore(client, path, 1);
    long before = zk.requestsSoFar(client);
    for (int i = 0; i < 5; i++) {
      assertThat(ours.tryHold(Duration.ZERO)).isEmpty();
    }
    // create, the read behind it, the delete: the "wait" verdict withdraws before any watch
    assertThat(zk.requestsSoFar(client) - before).isEqualTo(3L * 5);
    assertThat(zk.stats().watchedPaths(io.lockstep.testkit.internal.Sessions.id(client))).isEmpty();
    held.close();
  }

  private static Lease curatorAcquire(InterProcessSemaphoreV2 semaphore, int seconds) {
    try {
      return semaphore.acquire(seconds, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Optional<LockHold> ourAcquire(CountingSemaphore semaphore, int seconds) {
    try {
      return semaphore.tryHold(Duration.ofSeconds(seconds));
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
