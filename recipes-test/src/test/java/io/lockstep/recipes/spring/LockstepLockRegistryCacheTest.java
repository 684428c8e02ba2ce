package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The registry's cache of locks, bounded as Spring's {@code ZookeeperLockRegistry} bounds it
 * ({@code setCacheCapacity}, least recently used first), except that a lock in use is never
 * dropped: the behaviours of Spring's {@code setCapacityTest}, {@code concurrentObtainCapacityTest}
 * and {@code testLockEvictionWithAnotherLockOnTheKey}, and the acquires under way Spring does not
 * count.
 */
@Timeout(90)
class LockstepLockRegistryCacheTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private LockstepLockRegistry newRegistry() {
    return new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
  }

  @Test
  void theCapacity_keepsTheMostRecentlyObtainedLocks_andAnEvictedKeyGetsANewLock() {
    LockstepLockRegistry registry = newRegistry();
    registry.setCacheCapacity(4);
    LockstepLock first = registry.obtain("1");
    registry.obtain("2");
    registry.obtain("3");

    registry.setCacheCapacity(3);
    assertThat(registry.cachedKeys()).as("nothing beyond the capacity yet").hasSize(3);
    registry.obtain("4");
    assertThat(registry.cachedKeys()).containsExactly("2", "3", "4");

    LockstepLock second = registry.obtain("2"); // now the most recent
    registry.setCacheCapacity(4);
    registry.obtain("5");
    assertThat(registry.cachedKeys()).containsExactly("3", "4", "2", "5");
    registry.obtain("6");
    assertThat(registry.cachedKeys()).containsExactly("4", "2", "5", "6");

    assertThat(registry.obtain("2")).as("cached: the same lock").isSameAs(second);
    assertThat(registry.obtain("1")).as("evicted: a new lock").isNotSameAs(first);
    assertThat(registry.cachedKeys()).containsExactly("5", "6", "2", "1");
  }

  @Test
  void aSmallerCapacity_dropsTheSurplusAtOnce_leastRecentFirst() {
    LockstepLockRegistry registry = newRegistry();
    for (int i = 0; i < 10; i++) {
      registry.obtain("k" + i);
    }

    registry.setCacheCapacity(3);

    assertThat(registry.cachedKeys()).containsExactly("k7", "k8", "k9");
  }

  @Test
  void theDefaultCapacity_isSpringsThirtyThousand() {
    LockstepLockRegistry registry = newRegistry();
    LockstepLock first = registry.obtain("k0");

    for (int i = 1; i <= LockstepLockRegistry.DEFAULT_CACHE_CAPACITY; i++) {
      registry.obtain("k" + i);
    }

    assertThat(LockstepLockRegistry.DEFAULT_CACHE_CAPACITY).isEqualTo(30_000);
    List<String> keys = registry.cachedKeys();
    assertThat(keys).hasSize(30_000).doesNotContain("k0").startsWith("k1").endsWith("k30000");
    assertThat(registry.obtain("k0")).isNotSameAs(first);
  }

  /** Spring's testLockEvictionWithAnotherLockOnTheKey, on the capacity of one lock. */
  @Test
  void aHeldLock_isNotEvicted_soItsKeyGivesTheSameLock_reentrantly() throws Exception {
    LockstepLockRegistry registry = newRegistry();
    registry.setCacheCapacity(1);
    LockstepLock held = registry.obtain("test");
    held.lock();
    try {
      LockstepLock other = registry.obtain("test2");

      assertThat(registry.cachedKeys()).containsExactly("test", "test2");
      LockstepLock again = registry.obtain("test");
      assertThat(again).isSameAs(held);
      assertThat(again.tryLock(10, TimeUnit.SECONDS)).as("reentrant").isTrue();
      again.unlock();
      assertThat(registry.obtain("test3")).isNotNull();
      assertThat(registry.cachedKeys()).as("the unused one went").containsExactly("test", "test3");
      assertThat(registry.obtain("test2")).isNotSameAs(other);
    } finally {
      held.unlock();
    }
    registry.obtain("test4");
    assertThat(registry.cachedKeys())
        .as("released: evicted like any other")
        .containsExactly("test4");
  }

  /** Spring's registry counts only holds; an acquire waiting for another instance is in use too. */
  @Test
  void aLockAnAcquireWaitsFor_isNotEvicted() throws Exception {
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    registry.setCacheCapacity(1);
    InterProcessMutex otherInstance = new InterProcessMutex(zk.newClient(), root + "/waited");
    LockstepLock waited = registry.obtain("waited");
    otherInstance.acquire();
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<Void> waiting =
          waiter.run(
              () -> {
                waited.lock();
                waited.unlock();
              });
      await().until(() -> otherInstance.getParticipantNodes().size() == 2);

      for (int i = 0; i < 5; i++) {
        registry.obtain("k" + i);
      }

      assertThat(registry.cachedKeys()).containsExactly("waited", "k4");
      assertThat(registry.obtain("waited")).isSameAs(waited);
      otherInstance.release();
      waiting.get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A lock dropped while nobody used it, then locked by a caller that kept it, is cached again: its
   * key gives the lock the caller holds, not a second lock on the same path that the caller's own
   * hold would block.
   */
  @Test
  void aLockEvictedBetweenObtainAndLock_isCachedAgain_whenLocked() throws Exception {
    LockstepLockRegistry registry = newRegistry();
    registry.setCacheCapacity(1);
    LockstepLock kept = registry.obtain("kept");
    registry.obtain("other"); // evicts "kept": nobody uses it yet
    assertThat(registry.cachedKeys()).containsExactly("other");

    kept.lock();
    try {
      assertThat(registry.cachedKeys()).containsExactly("kept");
      LockstepLock again = registry.obtain("kept");
      assertThat(again).isSameAs(kept);
      assertThat(again.tryLock(10, TimeUnit.SECONDS)).as("reentrant").isTrue();
      again.unlock();
    } finally {
      kept.unlock();
    }
  }

  /**
   * The expiry racing {@code executeLocked}, one step at a time: a thread obtains the key's lock,
   * every unused lock is dropped before its attempt starts, and another thread obtains the key (a
   * new lock object) and locks it. Two lock objects of one key then exist in the process, but they
   * queue on the same path: the two threads never hold at once, and the second one's attempt leaves
   * nothing behind.
   */
  @Test
  void expiryBetweenObtainAndLock_twoLockObjectsOfOneKey_stillExcludeEachOther() throws Exception {
    LockstepLockRegistry registry = newRegistry();
    LockstepLock first = registry.obtain("k");
    registry.expireUnusedOlderThan(-1); // before first's attempt starts
    LockstepLock second = registry.obtain("k");
    assertThat(second).as("dropped unused: a new object").isNotSameAs(first);

    first.lock();
    try (LockThread other = new LockThread("other thread")) {
      assertThat(other.call(() -> second.tryLock(300, TimeUnit.MILLISECONDS)).get())
          .as("the other lock object of the key, while the first is held")
          .isFalse();
      CompletableFuture<Boolean> waiting = other.call(() -> second.tryLock(10, TimeUnit.SECONDS));
      first.unlock();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(first.tryLock()).as("now the other thread holds").isFalse();
      other.run(second::unlock).get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Spring's concurrentObtainCapacityTest, with each thread checking its held lock stays cached.
   */
  @Test
  void concurrentObtains_keepTheBound_andNeverEvictAHeldLock() throws Exception {
    LockstepLockRegistry registry = newRegistry();
    int capacity = 17;
    int threads = 8;
    int keysPerThread = 25;
    registry.setCacheCapacity(capacity);
    CountDownLatch start = new CountDownLatch(1);
    AtomicInteger mostCached = new AtomicInteger(); // sampled right after each obtain and lock
    AtomicInteger heldAndCached = new AtomicInteger();
    List<LockThread> workers = new ArrayList<>();
    List<CompletableFuture<Void>> runs = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        String prefix = "t" + t + "-";
        LockThread worker = new LockThread("worker-" + t);
        workers.add(worker);
        runs.add(
            worker.run(
                () -> {
                  start.await();
                  for (int i = 0; i < keysPerThread; i++) {
                    String key = prefix + i;
                    LockstepLock lock = registry.obtain(key);
                    mostCached.accumulateAndGet(registry.cachedKeys().size(), Math::max);
                    lock.lock();
                    try {
                      mostCached.accumulateAndGet(registry.cachedKeys().size(), Math::max);
                      if (registry.obtain(key) == lock) {
                        heldAndCached.incrementAndGet();
                      }
                    } finally {
                      lock.unlock();
                    }
                  }
                }));
      }
      start.countDown();
      CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    } finally {
      workers.forEach(LockThread::close);
    }

    assertThat(heldAndCached.get())
        .as("every held lock was its key's lock")
        .isEqualTo(threads * keysPerThread);
    assertThat(mostCached.get()).as("never more than the capacity").isLessThanOrEqualTo(capacity);
    assertThat(registry.cachedKeys()).hasSize(capacity);
    registry.expireUnusedOlderThan(-1000);
    assertThat(registry.cachedKeys()).isEmpty();
  }

  @Test
  void aCapacityBelowOne_isRefused_namingTheArgument() {
    LockstepLockRegistry registry = newRegistry();

    assertThatThrownBy(() -> registry.setCacheCapacity(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity");
    assertThatThrownBy(() -> registry.setCacheCapacity(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity");
  }
}
