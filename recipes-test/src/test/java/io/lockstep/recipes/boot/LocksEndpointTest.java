package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.boot.LocksEndpoint.LockReport;
import io.lockstep.recipes.boot.LocksEndpoint.RootReport;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code locks} endpoint on a real server: a holder and a waiter of a registry key, locks at
 * any depth under several roots, the bound on the paths read, and ZooKeeper unreachable.
 */
@Timeout(60)
class LocksEndpointTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void listsTheHolderAndTheWaiter_ofARegistryKey_underTheRegistrysRootByDefault() {
    String root = zk.path("registry");
    CuratorFramework otherInstance = zk.newClient();
    BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues(
            "lockstep.registry.root=" + root, "management.endpoints.web.exposure.include=locks")
        .run(
            context -> {
              CuratorFramework client = context.getBean(CuratorFramework.class);
              var lock = context.getBean(LockstepLockRegistry.class).obtain("orders/17");
              lock.lock();
              CompletableFuture<LockHold> waiting =
                  new ReentrantMutex(otherInstance, root + "/orders/17")
                      .acquireAsync(Duration.ofSeconds(30))
                      .toCompletableFuture();
              try {
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                await("the waiter queued")
                    .until(
                        () ->
                            !only(endpoint.locks().roots()).locks().isEmpty()
                                && !only(only(endpoint.locks().roots()).locks())
                                    .waiters()
                                    .isEmpty());
                RootReport report = only(endpoint.locks().roots());
                assertThat(report.root()).isEqualTo(root);
                assertThat(report.truncated()).isFalse();
                assertThat(report.error()).isNull();
                LockReport orders = only(report.locks());
                assertThat(orders.path()).isEqualTo(root + "/orders/17");
                assertThat(only(orders.holders()).sessionId()).isEqualTo(session(client));
                assertThat(only(orders.holders()).mode()).isEqualTo("MUTEX");
                assertThat(only(orders.holders()).node()).startsWith(root + "/orders/17/_c_");
                assertThat(only(orders.holders()).ageMillis()).isNotNegative();
                assertThat(only(orders.waiters()).sessionId()).isEqualTo(session(otherInstance));
              } finally {
                lock.unlock();
              }
              waiting.get().close();
            });
  }

  @Test
  void listsEveryKindOfLock_atAnyDepth_underEachConfiguredRoot_inPathOrder() throws Exception {
    CuratorFramework client = zk.newClient();
    String a = zk.path("a");
    String b = zk.path("b");
    try (LockHold mutex = new ReentrantMutex(client, a + "/x/y").hold();
        LockHold outer = new ReentrantMutex(client, a + "/x").hold();
        LockHold reader = new ReadWriteMutex(client, b + "/rw").readLock().hold();
        LockHold lease = new CountingSemaphore(client, b + "/sem", 2).acquire()) {
      BootContexts.runner(zk.server().getConnectString())
          .withPropertyValues(
              "lockstep.inspector.roots=" + a + "," + b,
              "management.endpoints.web.exposure.include=locks")
          .run(
              context -> {
                List<RootReport> roots = context.getBean(LocksEndpoint.class).locks().roots();
                assertThat(roots).extracting(RootReport::root).containsExactly(a, b);
                assertThat(roots.get(0).locks())
                    .extracting(LockReport::path)
                    .containsExactly(a + "/x", a + "/x/y");
                assertThat(roots.get(1).locks())
                    .extracting(LockReport::path)
                    .as("the semaphore's leases, not its leases node as a lock of its own")
                    .containsExactly(b + "/rw", b + "/sem");
                assertThat(only(roots.get(1).locks().get(0).holders()).mode()).isEqualTo("READ");
                assertThat(only(roots.get(1).locks().get(1).holders()).mode()).isEqualTo("LEASE");
              });
    }
  }

  @Test
  void stopsAtMaxPaths_andSaysTheListingIsTruncated() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("many");
    try (LockHold first = new ReentrantMutex(client, root + "/k1").hold();
        LockHold second = new ReentrantMutex(client, root + "/k2").hold();
        LockHold third = new ReentrantMutex(client, root + "/k3").hold()) {
      LocksEndpoint endpoint = new LocksEndpoint(client, List.of(root), 3); // root, k1, k2
      RootReport report = only(endpoint.locks().roots());
      assertThat(report.locks())
          .extracting(LockReport::path)
          .containsExactly(root + "/k1", root + "/k2");
      assertThat(report.truncated()).isTrue();
      assertThat(only(new LocksEndpoint(client, List.of(root), 4).locks().roots()).truncated())
          .isFalse();
    }
  }

  @Test
  void zooKeeperUnreachable_theListingCarriesTheError() {
    BootContexts.runner("127.0.0.1:1")
        .withPropertyValues(
            "lockstep.zookeeper.connection-timeout=200ms",
            "lockstep.zookeeper.retry.max-retries=0",
            "management.endpoints.web.exposure.include=locks")
        .run(
            context -> {
              RootReport report = only(context.getBean(LocksEndpoint.class).locks().roots());
              assertThat(report.root()).isEqualTo(LockstepLockRegistry.DEFAULT_ROOT);
              assertThat(report.locks()).isEmpty();
              assertThat(report.truncated()).isTrue();
              assertThat(report.error()).contains(LockstepLockRegistry.DEFAULT_ROOT);
            });
  }

  private static String session(CuratorFramework client) throws Exception {
    return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
  }

  private static <T> T only(List<T> list) {
    assertThat(list).hasSize(1);
    return list.get(0);
  }
}
