package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.Hammer;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The Spring Integration registry: Spring's key-to-path mapping, exclusion with the {@code
 * InterProcessMutex} Spring's own registry uses on the same paths, {@code executeLocked}, and
 * expiry of unused locks.
 */
@Timeout(90)
class LockstepLockRegistryTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void keys_mapToPaths_asSpringsZookeeperLockRegistryMapsThem() {
    CuratorFramework client = zk.newClient();

    assertThat(new LockstepLockRegistry(client).pathOf("orders/17"))
        .isEqualTo("/SpringIntegration-LockRegistry/orders/17");
    assertThat(new LockstepLockRegistry(client, "/locks").pathOf("a")).isEqualTo("/locks/a");
    assertThat(new LockstepLockRegistry(client, "/locks/").pathOf("a")).isEqualTo("/locks/a");
    assertThat(new LockstepLockRegistry(client, "/").pathOf("a")).isEqualTo("/a");
    assertThat(new LockstepLockRegistry(client, "/locks").pathOf("tenant-7/order.17"))
        .isEqualTo("/locks/tenant-7/order.17");
  }

  @Test
  void theLockOfAKey_queuesAtItsPath_inCuratorsLayout_withTheNodesCzxidAsToken() throws Exception {
    CuratorFramework client = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(client, zk.path("registry"));
    LockstepLock lock = registry.obtain("tenant-7/orders");
    String path = zk.path("registry") + "/tenant-7/orders";

    lock.lock();
    try {
      List<String> nodes = client.getChildren().forPath(path);
      assertThat(nodes)
          .singleElement()
          .asString()
          .matches("_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\\d{10}");
      long czxid = client.checkExists().forPath(path + "/" + nodes.get(0)).getCzxid();
      assertThat(lock.fencingToken()).isEqualTo(czxid);
    } finally {
      lock.unlock();
    }
    // the lock directory is a container: the server may reap it once empty
    assertThat(ZooKeeperExtension.childrenOrNone(client, path)).isEmpty();
  }

  @Test
  void curatorsMutex_andTheRegistry_excludeEachOther_onTheSamePaths() throws Exception {
    String root = zk.path("registry");
    InterProcessMutex spring = new InterProcessMutex(zk.newClient(), root + "/orders-17");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    Lock lock = registry.obtain("orders-17");

    spring.acquire();
    assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
    spring.release();

    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
    try (LockThread other = new LockThread("spring-instance")) {
      assertThat(other.call(() -> spring.acquire(300, TimeUnit.MILLISECONDS)).get()).isFalse();
      CompletableFuture<Boolean> waiting = other.call(() -> spring.acquire(10, TimeUnit.SECONDS));
      lock.unlock();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      other.run(spring::release).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aFleetHalfUpgraded_hammeringOneKey_neverHasTwoHolders() throws Exception {
    String root = zk.path("registry");
    List<InterProcessLock> locks = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      locks.add(new InterProcessMutex(zk.newClient(), root + "/invoice-9")); // not yet upgraded
      locks.add(
          asInterProcessLock(new LockstepLockRegistry(zk.newClient(), root).obtain("invoice-9")));
    }

    Hammer.Result result = Hammer.run(locks, 15, 80);

    assertThat(result.entries()).isEqualTo(locks.size() * 15);
    assertThat(result.mostInsideAtOnce()).isEqualTo(1);
  }

  @Test
  void obtain_givesTheSameLockForAKey_andItsFencingToken() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));

    LockstepLock lock = registry.obtain("a");
    assertThat(registry.obtain("a")).isSameAs(lock);
    assertThat(registry.obtain("b")).isNotSameAs(lock);

    lock.lock();
    try {
      Lock again = registry.obtain("a");
      again.lock(); // reentrant: the same lock object, the same thread
      long token = ((LockstepLock) again).fencingToken();
      assertThat(token).isPositive().isEqualTo(lock.fencingToken());
      again.unlock();
      assertThat(lock.fencedLock().isAcquiredInThisProcess()).isTrue();
    } finally {
      lock.unlock();
    }
    assertThat(lock.fencedLock().isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void executeLocked_runsTheTaskUnderTheLock_andReleasesIt() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("registry");
    LockRegistry<LockstepLock> registry = new LockstepLockRegistry(client, root);
    InterProcessMutex other = new InterProcessMutex(zk.newClient(), root + "/report");
    AtomicLong tokenSeen = new AtomicLong();

    registry.executeLocked(
        "report",
        () -> {
          tokenSeen.set(registry.obtain("report").fencingToken());
          assertThat(other.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
        });
    String answer =
        registry.executeLocked("report", Duration.ofSeconds(5), () -> "ran under the lock");

    assertThat(tokenSeen.get()).isPositive();
    assertThat(answer).isEqualTo("ran under the lock");
    assertThat(registry.obtain("report").fencedLock().isAcquiredInThisProcess()).isFalse();
    // the lock directory is a container: the server may reap it once empty
    assertThat(ZooKeeperExtension.childrenOrNone(client, root + "/report")).isEmpty();
  }

  @Test
  void executeLocked_withABudget_throwsTimeoutException_whileAnotherInstanceHolds()
      throws Exception {
    String root = zk.path("registry");
    InterProcessMutex other = new InterProcessMutex(zk.newClient(), root + "/report");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    List<String> ran = new ArrayList<>();

    other.acquire();
    try {
      assertThatThrownBy(
              () ->
                  registry.executeLocked(
                      "report", Duration.ofMillis(300), () -> ran.add("should not run")))
          .isInstanceOf(TimeoutException.class);
    } finally {
      other.release();
    }
    assertThat(ran).isEmpty();
    // the timed-out attempt leaves nothing (its delete confirmed within the grace, or soon after)
    await().untilAsserted(() -> assertThat(other.getParticipantNodes()).isEmpty());
  }

  @Test
  void executeLocked_passesTheTasksOwnExceptionThrough_andReleases() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));

    assertThatThrownBy(
            () ->
                registry.executeLocked(
                    "report",
                    () -> {
                      throw new java.io.IOException("disk full");
                    }))
        .isInstanceOf(java.io.IOException.class)
        .hasMessage("disk full");
    assertThat(registry.obtain("report").fencedLock().isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void expireUnusedOlderThan_dropsOnlyLocksNotInUse() throws Exception {
    String root = zk.path("registry");
    ExpirableLockRegistry<LockstepLock> registry = new LockstepLockRegistry(zk.newClient(), root);
    InterProcessMutex other = new InterProcessMutex(zk.newClient(), root + "/waited");
    LockstepLock idle = registry.obtain("idle");
    LockstepLock held = registry.obtain("held");
    LockstepLock waited = registry.obtain("waited");
    held.lock();
    other.acquire();
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<Void> waiting =
          waiter.run(
              () -> {
                waited.lock();
                waited.unlock();
              });
      await().until(() -> other.getParticipantNodes().size() == 2);

      registry.expireUnusedOlderThan(0);

      assertThat(registry.obtain("idle")).as("unused: dropped").isNotSameAs(idle);
      assertThat(registry.obtain("held")).as("held: kept").isSameAs(held);
      assertThat(registry.obtain("waited")).as("an acquire waiting: kept").isSameAs(waited);

      other.release();
      waiting.get(10, TimeUnit.SECONDS);
    } finally {
      held.unlock();
    }
    registry.expireUnusedOlderThan(0);
    assertThat(registry.obtain("held")).as("released: dropped").isNotSameAs(held);
    assertThat(registry.obtain("waited")).as("released: dropped").isNotSameAs(waited);
  }

  @Test
  void expireUnusedOlderThan_keepsLocksObtainedWithinTheAge() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
    LockstepLock lock = registry.obtain("recent");

    registry.expireUnusedOlderThan(TimeUnit.HOURS.toMillis(1));

    assertThat(registry.obtain("recent")).isSameAs(lock);
  }

  /** As Spring's registries: a negative age expires every lock not in use. */
  @Test
  void expireUnusedOlderThan_aNegativeAge_dropsEveryLockNotInUse() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
    LockstepLock idle = registry.obtain("idle");
    LockstepLock held = registry.obtain("held");
    held.lock();
    try {
      registry.expireUnusedOlderThan(-1000);

      assertThat(registry.obtain("idle")).as("unused: dropped").isNotSameAs(idle);
      assertThat(registry.obtain("held")).as("held: kept").isSameAs(held);
      registry.expireUnusedOlderThan(Long.MIN_VALUE);
      assertThat(registry.obtain("held")).as("held: kept").isSameAs(held);
      LockstepLock idleAgain = registry.obtain("idle");
      registry.expireUnusedOlderThan(Duration.ofMillis(-1));
      assertThat(registry.obtain("idle")).as("a negative Duration too").isNotSameAs(idleAgain);
      assertThat(registry.obtain("held")).as("held: kept").isSameAs(held);
    } finally {
      held.unlock();
    }
  }

  /**
   * Spring's testTwoThreadsSecondFailsToGetLock and testTwoThreadsWrongOneUnlocks: a thread that
   * does not hold the lock cannot unlock it, and the holder's hold is untouched. The exception
   * differs (docs/spring.md): Spring's ZooKeeper lock throws a {@code MessagingException} whose
   * cause is Curator's {@code IllegalMonitorStateException}; ours is that {@code
   * IllegalMonitorStateException} itself, with Curator's words, as {@code ReentrantLock} throws it.
   */
  @Test
  void unlock_byAThreadThatDoesNotHold_throwsIllegalMonitorStateException_andTheHoldStays()
      throws Exception {
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    InterProcessMutex otherInstance = new InterProcessMutex(zk.newClient(), root + "/orders");
    LockstepLock lock = registry.obtain("orders");
    lock.lockInterruptibly();
    try (LockThread other = new LockThread("other")) {
      assertThat(other.call(() -> registry.obtain("orders").tryLock(200, TimeUnit.MILLISECONDS)))
          .succeedsWithin(Duration.ofSeconds(10))
          .isEqualTo(false);
      assertThat(other.run(() -> registry.obtain("orders").unlock()))
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableOfType(ExecutionException.class)
          .havingCause()
          .isExactlyInstanceOf(IllegalMonitorStateException.class)
          .withMessageContaining("You do not own the lock")
          .withMessageContaining(root + "/orders");

      assertThat(lock.fencedLock().isAcquiredInThisProcess()).as("still held").isTrue();
      assertThat(otherInstance.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    } finally {
      lock.unlock();
    }
    assertThat(otherInstance.acquire(10, TimeUnit.SECONDS)).as("released").isTrue();
    otherInstance.release();
  }

  @Test
  void unlock_ofALockNeverLocked_throwsIllegalMonitorStateException() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));

    assertThatThrownBy(() -> registry.obtain("never").unlock())
        .isExactlyInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining("You do not own the lock");
  }

  // Issue 21: the Duration form of expireUnusedOlderThan(long milliseconds).
  @Test
  void expireUnusedOlderThanADuration_keepsRecentLocks_andDropsOlderOnes() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
    LockstepLock lock = registry.obtain("recent");

    registry.expireUnusedOlderThan(Duration.ofHours(1));
    registry.expireUnusedOlderThan(Duration.ofSeconds(Long.MAX_VALUE)); // too long for millis
    assertThat(registry.obtain("recent")).as("obtained within the age: kept").isSameAs(lock);
    registry.expireUnusedOlderThan(Duration.ZERO);
    assertThat(registry.obtain("recent")).as("unused: dropped").isNotSameAs(lock);
  }

  @Test
  void aLostHold_isReportedAtTheNextLock_andClearedByUnlock() throws Exception {
    CuratorFramework client = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(client, zk.path("registry"));
    LockstepLock lock = registry.obtain("leader");
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.fencedLock().getStateListenable().addListener(change -> states.add(change.state()));
    lock.lock();

    Sessions.expire(client, zk.server().getConnectString());

    await("the hold is lost").until(() -> states.contains(LockState.LOST));
    assertThatThrownBy(() -> lock.tryLock(10, TimeUnit.MILLISECONDS))
        .as("locking again in the holding thread")
        .isInstanceOf(LockOwnershipLostException.class);
    lock.unlock(); // clears the lost hold without throwing
    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
    lock.unlock();
  }

  /**
   * The difference docs/spring.md states: what Spring's registry relies on, Curator's mutex, takes
   * a reentrant acquire after its session was lost for a hold, so a leader never learns it lost.
   */
  @Test
  void curatorsMutex_reacquiredAfterItsSessionWasLost_saysNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    InterProcessMutex spring = new InterProcessMutex(client, zk.path("registry") + "/leader");
    InterProcessMutex observer =
        new InterProcessMutex(zk.newClient(), zk.path("registry") + "/leader");
    spring.acquire();

    Sessions.expire(client, zk.server().getConnectString());
    await("the server deleted the node").until(() -> observer.getParticipantNodes().isEmpty());

    assertThat(spring.acquire(1, TimeUnit.SECONDS)).as("Curator: still 'held'").isTrue();
    spring.release();
    spring.release();
  }

  @Test
  void badInput_isRefused_namingTheArgument() {
    CuratorFramework client = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(client, zk.path("registry"));

    assertThatThrownBy(() -> new LockstepLockRegistry(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> new LockstepLockRegistry(client, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("root");
    assertThatThrownBy(() -> new LockstepLockRegistry(client, "locks"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("root");
    assertThatThrownBy(() -> registry.obtain(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> registry.obtain(17))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key must be a String");
    assertThatThrownBy(() -> registry.obtain(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key ''");
    assertThatThrownBy(() -> registry.obtain("a//b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key 'a//b'");
    assertThatThrownBy(() -> registry.expireUnusedOlderThan((Duration) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("age");
  }

  /** The registry's lock, as the hammer drives locks. */
  private static InterProcessLock asInterProcessLock(Lock lock) {
    return new InterProcessLock() {
      @Override
      public void acquire() {
        lock.lock();
      }

      @Override
      public boolean acquire(long time, TimeUnit unit) throws InterruptedException {
        return lock.tryLock(time, unit);
      }

      @Override
      public void release() {
        lock.unlock();
      }

      @Override
      public boolean isAcquiredInThisProcess() {
        return ((LockstepLock) lock).fencedLock().isAcquiredInThisProcess();
      }
    };
  }
}
