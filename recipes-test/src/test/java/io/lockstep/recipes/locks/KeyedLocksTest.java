package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Locks by key: one lock object per key while in use, any key safely mapped under the root. */
@Timeout(60)
class KeyedLocksTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void theSameKey_givesTheSameLock_whileInUse_andExpiryDropsOnlyUnusedOnes() throws Exception {
    KeyedLocks locks = new KeyedLocks(zk.newClient(), zk.path("orders"));
    ReentrantMutex busy = locks.mutex("order-17");
    ReentrantMutex idle = locks.mutex("order-18");
    assertThat(locks.mutex("order-17")).isSameAs(busy);
    busy.acquire();

    locks.expireUnusedOlderThan(Duration.ZERO);

    assertThat(locks.mutex("order-17")).as("in use: kept").isSameAs(busy);
    assertThat(locks.mutex("order-18")).as("unused: dropped").isNotSameAs(idle);
    busy.release();
    locks.expireUnusedOlderThan(Duration.ofHours(1));
    assertThat(locks.mutex("order-17")).as("recently asked for: kept").isSameAs(busy);
  }

  @Test
  void anyKey_becomesOneNodeUnderTheRoot_withoutReachingOutside() throws Exception {
    CuratorFramework client = zk.newClient();
    KeyedLocks locks = new KeyedLocks(client, zk.path("k"));
    String root = zk.path("k");

    assertThat(locks.pathOf("order-17_a.b")).isEqualTo(root + "/order-17_a.b");
    assertThat(locks.pathOf("../../zookeeper")).isEqualTo(root + "/..%2F..%2Fzookeeper");
    assertThat(locks.pathOf("..")).isEqualTo(root + "/%2E%2E");
    assertThat(locks.pathOf("a/b")).isEqualTo(root + "/a%2Fb");
    assertThat(locks.pathOf("é ü")).isEqualTo(root + "/%C3%A9%20%C3%BC");
    assertThat(locks.pathOf("\u0000")).isEqualTo(root + "/%00");

    for (String key : new String[] {"..", "a/b", "\u0000", "é ü", "%2F"}) {
      ReentrantMutex lock = locks.mutex(key);
      lock.acquire();
      assertThat(client.getChildren().forPath(locks.pathOf(key))).hasSize(1);
      lock.release();
    }
    assertThat(locks.pathOf("%2F")).isNotEqualTo(locks.pathOf("/")).isEqualTo(root + "/%252F");
  }

  @Test
  void aKeyedMutex_excludesCuratorsMutexOnTheSamePath() throws Exception {
    CuratorFramework client = zk.newClient();
    KeyedLocks locks = new KeyedLocks(client, zk.path("k"));
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), locks.pathOf("tenant/7"));
    curator.acquire();
    try {
      assertThat(locks.mutex("tenant/7").acquire(200, java.util.concurrent.TimeUnit.MILLISECONDS))
          .isFalse();
    } finally {
      curator.release();
    }
  }

  @Test
  void readWriteLocks_byKey_andOneKindPerKey() throws Exception {
    KeyedLocks locks = new KeyedLocks(zk.newClient(), zk.path("k"));
    ReadWriteMutex catalog = locks.readWrite("catalog");
    assertThat(locks.readWrite("catalog")).isSameAs(catalog);
    try (LockHold hold = catalog.readLock().hold()) {
      hold.checkHeld();
    }
    assertThatThrownBy(() -> locks.mutex("catalog"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("catalog");
  }

  @Test
  void badInput_isRefusedByName_andCreatesNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    long before = zk.requestsSoFar(client);

    assertThatThrownBy(() -> new KeyedLocks(null, "/x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> new KeyedLocks(client, "/"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("root");
    assertThatThrownBy(() -> new KeyedLocks(client, "no-slash"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("root");
    KeyedLocks locks = new KeyedLocks(client, zk.path("k"));
    assertThatThrownBy(() -> locks.mutex(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> locks.readWrite(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> locks.mutex("x".repeat(2_000)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key is too long");
    assertThatThrownBy(() -> locks.expireUnusedOlderThan(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("age");

    assertThat(zk.requestsSoFar(client)).isEqualTo(before);
    assertThat(client.checkExists().forPath(zk.path("k"))).isNull();
  }

  // Issue 21: keys that differed in a lone surrogate shared one node (both became '?').
  @Test
  void everyKey_hasANodeOfItsOwn_andThePathGivesTheKeyBack() {
    KeyedLocks locks = new KeyedLocks(zk.newClient(), zk.path("k"));
    java.util.List<String> keys =
        java.util.List.of("\uD800", "\uDBFF", "?", "a\uDC00", "a?", "_c_x-lock-0000000001", "%3F");

    java.util.List<String> paths = keys.stream().map(locks::pathOf).toList();

    assertThat(paths).doesNotHaveDuplicates();
    for (int i = 0; i < keys.size(); i++) {
      assertThat(locks.keyOf(paths.get(i))).isEqualTo(keys.get(i));
    }
  }
}
