package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.compat.LeaderLatch;
import io.lockstep.recipes.leader.compat.LeaderSelector;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Recipe objects made before their client starts, as a Spring context makes its beans, or as
 * Curator's recipes allow: each works once the client has started, and a check that needs the
 * started client (a multi-lock's transaction size) runs at the first acquire instead, before
 * anything is sent.
 */
@Timeout(60)
class BeforeClientStartTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private CuratorFramework client;

  @AfterEach
  void closeClient() {
    CloseableUtils.closeQuietly(client);
  }

  private CuratorFramework notStarted(String connectString) {
    client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    return client;
  }

  @Test
  void everyRecipe_madeBeforeItsClientStarts_isGrantedOnceItHas() throws Exception {
    CuratorFramework c = notStarted(zk.server().getConnectString());
    MultiMutex multi = new MultiMutex(c, List.of(zk.path("multi-a"), zk.path("multi-b")));
    MultiMutex modes =
        MultiMutex.builder(c).mutex(zk.path("modes-a")).read(zk.path("modes-b")).build();
    ReentrantMutex handoff =
        ReentrantMutex.builder(c, zk.path("handoff"))
            .localHandoff()
            .linger(Duration.ofMillis(50))
            .build();
    NonReentrantMutex nonReentrant = new NonReentrantMutex(c, zk.path("non-reentrant"));
    SemaphoreMutex semaphoreMutex = new SemaphoreMutex(c, zk.path("semaphore-mutex"));
    ReadWriteMutex readWrite = ReadWriteMutex.builder(c, zk.path("rw")).localHandoff().build();
    CountingSemaphore semaphore = new CountingSemaphore(c, zk.path("semaphore"), 2);
    KeyedLocks keyed = new KeyedLocks(c, zk.path("keyed"));
    LeaderElection election = LeaderElection.builder(c, zk.path("election")).build();
    LeaderLatch latch = new LeaderLatch(c, zk.path("latch"));
    CountDownLatch led = new CountDownLatch(1);
    LeaderSelector selector =
        new LeaderSelector(
            c,
            zk.path("selector"),
            new LeaderSelectorListenerAdapter() {
              @Override
              public void takeLeadership(CuratorFramework leader) {
                led.countDown();
              }
            });
    LockstepLockRegistry registry = new LockstepLockRegistry(c, zk.path("registry"));

    c.start();

    for (FencedLock lock :
        List.of(multi, modes, handoff, nonReentrant, semaphoreMutex, readWrite.readLock())) {
      assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("%s", lock).isTrue();
      lock.release();
    }
    try (LockHold lease = semaphore.tryHold(Duration.ofSeconds(10)).orElseThrow()) {
      assertThat(lease.fencingToken()).isPositive();
    }
    ReentrantMutex key = keyed.mutex("order-17");
    assertThat(key.acquire(10, TimeUnit.SECONDS)).isTrue();
    key.release();
    election.start();
    assertThat(election.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    election.close();
    latch.start();
    assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
    latch.close();
    selector.start();
    assertThat(led.await(10, TimeUnit.SECONDS)).isTrue();
    selector.close();
    Lock registryLock = registry.obtain("order-17");
    assertThat(registryLock.tryLock(10, TimeUnit.SECONDS)).isTrue();
    registryLock.unlock();
    handoff.close(); // gives back its lingering place
    readWrite.close();
  }

  @Test
  void aMultiMutexTooLargeForOneTransaction_madeBeforeItsClientStarts_isRefusedAtEachAcquire()
      throws Exception {
    CuratorFramework c = notStarted(zk.server().getConnectString());
    MultiMutex multi =
        MultiMutex.builder(c)
            .mutex(zk.path("large-a"))
            .mutex(zk.path("large-b"))
            .lockData(new byte[600 * 1024])
            .build();
    c.start();

    assertThatThrownBy(() -> multi.acquire(10, TimeUnit.SECONDS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("paths: ")
        .hasMessageContaining("jute.maxbuffer");
    assertThatThrownBy(() -> multi.tryHold(Duration.ofSeconds(10)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> multi.acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS))
        .satisfiesAnyOf(
            e -> assertThat(e).isInstanceOf(IllegalArgumentException.class),
            e ->
                assertThat(e)
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalArgumentException.class));

    CuratorFramework observer = zk.newClient();
    assertThat(observer.checkExists().forPath(zk.path("large-a"))).as("nothing sent").isNull();
    assertThat(observer.checkExists().forPath(zk.path("large-b"))).as("nothing sent").isNull();
  }

  @Test
  void theTransactionSizeCheck_countsTheChrootBeforeEveryNode() throws Exception {
    String chroot = "/" + "c".repeat(300);
    CuratorFramework plain = zk.newClient();
    CuratorFramework chrooted =
        zk.newClient(builder -> builder.connectString(zk.server().getConnectString() + chroot));

    int plainLargest = largestAcceptedLockData(plain);
    int chrootedLargest = largestAcceptedLockData(chrooted);

    assertThat(plainLargest).isGreaterThan(500 * 1024);
    assertThat(plainLargest - chrootedLargest).isEqualTo(chroot.length());
  }

  /** The largest lock data a two-path multi-lock of {@code c} is built with (a binary search). */
  private int largestAcceptedLockData(CuratorFramework c) {
    int accepted = 0;
    int refused = 1 << 20;
    while (refused - accepted > 1) {
      int size = (accepted + refused) >>> 1;
      try {
        var unused =
            MultiMutex.builder(c)
                .mutex(zk.path("size-a"))
                .mutex(zk.path("size-b"))
                .lockData(new byte[size])
                .build();
        accepted = size;
      } catch (IllegalArgumentException e) {
        refused = size;
      }
    }
    return accepted;
  }
}
