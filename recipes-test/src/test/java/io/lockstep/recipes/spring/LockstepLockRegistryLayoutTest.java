package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The registry's hashed key layout: keys map as {@link KeyedLocks} maps them with the same layout,
 * so both exclude each other on a key; Spring's mapping stays the default; the layout is fixed once
 * a lock was obtained.
 */
@Timeout(60)
class LockstepLockRegistryLayoutTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void aHashedLayout_mapsKeysAsKeyedLocksDoes_andSpringsMappingStaysTheDefault() {
    CuratorFramework client = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(client, "/locks");
    assertThat(registry.pathOf("order-17")).isEqualTo("/locks/order-17");

    LockstepLockRegistry hashed = new LockstepLockRegistry(client, "/locks/");
    hashed.setKeyLayout(KeyLayout.hashed(2));
    assertThat(hashed.pathOf("order-17"))
        .as("SHA-256 of \"order-17\" starts with 72 a9")
        .isEqualTo("/locks/72/a9/order-17")
        .isEqualTo(new KeyedLocks(client, "/locks", KeyLayout.hashed(2)).pathOf("order-17"));
    assertThat(hashed.pathOf("a/b")).endsWith("/a%2Fb");
  }

  @Test
  void theRegistry_andKeyedLocks_withOneLayout_excludeEachOtherOnAKey() throws Exception {
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    registry.setKeyLayout(KeyLayout.hashed(2));
    KeyedLocks keyed = new KeyedLocks(zk.newClient(), root, KeyLayout.hashed(2));

    LockstepLock lock = registry.obtain("order-17");
    lock.lock();
    try {
      assertThat(keyed.mutex("order-17").tryHold(Duration.ZERO))
          .as("the key is held through the registry")
          .isEmpty();
    } finally {
      lock.unlock();
    }
    try (LockHold hold = keyed.mutex("order-17").hold()) {
      assertThat(registry.obtain("order-17").tryLock()).isFalse();
      assertThat(hold.fencingToken()).isPositive();
    }
  }

  @Test
  void theLayout_isRefused_onceALockWasObtained_andNullIsRefused() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), "/locks");
    assertThatThrownBy(() -> registry.setKeyLayout(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("layout");
    registry.obtain("order-17");
    assertThatThrownBy(() -> registry.setKeyLayout(KeyLayout.hashed(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("before the first lock");
    assertThat(registry.pathOf("order-17")).isEqualTo("/locks/order-17");
  }
}
