package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LockstepLockRegistry#obtainAll}: the lock of several keys at once, on the single-key
 * queues, atomic, fenced, cached as one key's lock is, and refusing bad keys before anything is
 * sent.
 */
@Timeout(90)
class LockstepLockRegistryMultiKeyTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void theLockOfSeveralKeys_queuesAtEachKeysPath_andIsTheSameObjectInAnyOrder() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(client, root);

    LockstepLock both = registry.obtainAll(List.of("accounts/17", "accounts/4"));
    assertThat(registry.obtainAll(List.of("accounts/4", "accounts/17"))).isSameAs(both);
    assertThat(both.fencedLock()).isInstanceOf(MultiMutex.class);
    assertThat(registry.obtainAll(List.of("accounts/17"))).isSameAs(registry.obtain("accounts/17"));

    both.lock();
    try {
      assertThat(client.getChildren().forPath(root + "/accounts/17")).hasSize(1);
      assertThat(client.getChildren().forPath(root + "/accounts/4")).hasSize(1);
      both.lock(); // reentrant, as one key's lock
      both.unlock();
      assertThat(both.fencedLock().isAcquiredInThisProcess()).isTrue();
    } finally {
      both.unlock();
    }
    assertThat(ZooKeeperExtension.childrenOrNone(client, root + "/accounts/17")).isEmpty();
    assertThat(ZooKeeperExtension.childrenOrNone(client, root + "/accounts/4")).isEmpty();
  }

  @Test
  void itExcludes_andIsExcludedBy_eachKeysOwnLock_inAnotherProcess() throws Exception {
    String root = zk.path("registry");
    LockstepLockRegistry here = new LockstepLockRegistry(zk.newClient(), root);
    LockstepLockRegistry there = new LockstepLockRegistry(zk.newClient(), root);
    LockstepLock both = here.obtainAll(List.of("a", "b"));

    try (LockThread other = new LockThread("other process")) {
      assertThat(other.call(() -> there.obtain("b").tryLock(10, TimeUnit.SECONDS)).get()).isTrue();
      assertThat(both.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
      assertThat(ZooKeeperExtension.childrenOrNone(zk.newClient(), root + "/a"))
          .as("the timed-out attempt left no node on the free key")
          .isEmpty();
      other.run(() -> there.obtain("b").unlock()).get();

      assertThat(both.tryLock(10, TimeUnit.SECONDS)).isTrue();
      try {
        for (String key : List.of("a", "b")) {
          assertThat(other.call(() -> there.obtain(key).tryLock(300, TimeUnit.MILLISECONDS)).get())
              .as(key)
              .isFalse();
        }
      } finally {
        both.unlock();
      }
      assertThat(other.call(() -> there.obtain("a").tryLock(10, TimeUnit.SECONDS)).get()).isTrue();
      other.run(() -> there.obtain("a").unlock()).get();
    }
  }

  @Test
  void itsToken_isGreaterThanEveryTokenBefore_onEitherKey_andTheNextHoldsAreGreaterStill()
      throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
    LockstepLock a = registry.obtain("a");
    LockstepLock b = registry.obtain("b");
    LockstepLock both = registry.obtainAll(List.of("b", "a"));

    long tokenA = tokenOfOneHold(a);
    long tokenB = tokenOfOneHold(b);
    long tokenBoth = tokenOfOneHold(both);

    assertThat(tokenBoth).isGreaterThan(Math.max(tokenA, tokenB));
    assertThat(tokenOfOneHold(a)).isGreaterThan(tokenBoth);
    assertThat(tokenOfOneHold(b)).isGreaterThan(tokenBoth);
  }

  @Test
  void callersNamingSharedKeysInOppositeOrders_neverDeadlock_andNeverOverlap() throws Exception {
    String root = zk.path("registry");
    List<LockstepLockRegistry> processes =
        List.of(
            new LockstepLockRegistry(zk.newClient(), root),
            new LockstepLockRegistry(zk.newClient(), root));
    List<List<String>> orders = List.of(List.of("x", "y", "z"), List.of("z", "y", "x"));
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    int rounds = 15;
    List<CompletableFuture<Void>> workers = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      LockstepLock lock = processes.get(i).obtainAll(orders.get(i));
      workers.add(
          CompletableFuture.runAsync(
              () -> {
                for (int round = 0; round < rounds; round++) {
                  lock.lock();
                  try {
                    if (inside.incrementAndGet() != 1) {
                      overlaps.incrementAndGet();
                    }
                    inside.decrementAndGet();
                  } finally {
                    lock.unlock();
                  }
                }
              }));
    }

    CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    assertThat(overlaps).hasValue(0);
  }

  @Test
  void aTimeToLive_endsTheHoldOfEveryKey_andUnlockSaysSo() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(client, root);
    LockstepLock both = registry.obtainAll(List.of("a", "b"));

    both.lock(Duration.ofMillis(300));
    CompletableFuture<LockOwnershipLostException> lost = both.whenLost().toCompletableFuture();

    assertThat(lost.get(30, TimeUnit.SECONDS)).isNotNull();
    await().until(() -> ZooKeeperExtension.childrenOrNone(client, root + "/a").isEmpty());
    await().until(() -> ZooKeeperExtension.childrenOrNone(client, root + "/b").isEmpty());
    assertThatThrownBy(both::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(both::unlock).isInstanceOf(ConcurrentModificationException.class);
    assertThat(both.fencedLock().isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void severalKeysLocks_countAgainstTheCapacity_andAreDroppedWhenUnused() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("registry"));
    registry.setCacheCapacity(1);
    LockstepLock both = registry.obtainAll(List.of("a", "b"));

    registry.obtain("c");

    assertThat(registry.cachedKeys()).containsExactly("c");
    assertThat(registry.obtainAll(List.of("a", "b"))).isNotSameAs(both);
  }

  @Test
  void aKeySpelledAsSeveralKeysCacheEntry_getsALockOfItsOwn_andTheyGetTheirs() {
    // With a key layout, a key may hold any character, also the one that separates the keys of a
    // several keys' lock in the cache: "\0a\0b" is one key, locked at its own path.
    String root = zk.path("registry");
    String oneKey = "\u0000a\u0000b";
    LockstepLockRegistry severalFirst = new LockstepLockRegistry(zk.newClient(), root);
    severalFirst.setKeyLayout(KeyLayout.flat());
    LockstepLock both = severalFirst.obtainAll(List.of("a", "b"));

    LockstepLock single = severalFirst.obtain(oneKey);

    assertThat(single).as("the lock of the key %s", severalFirst.pathOf(oneKey)).isNotSameAs(both);
    assertThat(single.fencedLock()).isInstanceOf(ReentrantMutex.class);

    LockstepLockRegistry singleFirst = new LockstepLockRegistry(zk.newClient(), root);
    singleFirst.setKeyLayout(KeyLayout.flat());
    LockstepLock theKey = singleFirst.obtain(oneKey);

    assertThat(singleFirst.obtainAll(List.of("b", "a")).fencedLock())
        .as("the lock of the keys a and b")
        .isInstanceOf(MultiMutex.class);
    assertThat(singleFirst.obtain(oneKey)).isSameAs(theKey);
  }

  @Test
  void badKeys_areRefusedNamingTheArgument_beforeAnythingIsSent() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(client, root);
    long before = zk.requestsSoFar(client);

    assertThatThrownBy(() -> registry.obtainAll(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("keys");
    assertThatThrownBy(() -> registry.obtainAll(List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keys is empty");
    assertThatThrownBy(() -> registry.obtainAll(List.of("a", "a")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a' twice");
    assertThatThrownBy(() -> registry.obtainAll(List.of("a", 7)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must be a String");
    assertThatThrownBy(() -> registry.obtainAll(List.of("a", "b//c")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'b//c'");
    assertThatThrownBy(() -> registry.obtainAll(List.of("a", "a/b")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keys [a, a/b]");

    assertThat(zk.requestsSoFar(client)).isEqualTo(before);
    assertThat(client.checkExists().forPath(root)).isNull();
  }

  private static long tokenOfOneHold(LockstepLock lock) {
    lock.lock();
    try {
      return lock.fencingToken();
    } finally {
      lock.unlock();
    }
  }
}
