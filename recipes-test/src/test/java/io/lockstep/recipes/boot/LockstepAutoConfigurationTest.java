package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockedBeanPostProcessor;
import io.lockstep.recipes.spring.LockedCall;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The beans Lockstep's auto-configuration makes from properties, on a real server: the client
 * connects and the registry's locks are its nodes; the expiry drops unused locks; the metrics are
 * bound; and closing the context closes the client and ends every thread the beans started. The
 * extension checks after each test that no node and no watch is left.
 */
@Timeout(60)
class LockstepAutoConfigurationTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ApplicationContextRunner runner() {
    return BootContexts.runner(zk.server().getConnectString());
  }

  @Test
  void theClient_isMadeFromTheProperties_andTheRegistrysLockIsItsNodeOnTheServer()
      throws Exception {
    String root = zk.path("registry");
    CuratorFramework observer = zk.newClient();
    runner()
        .withPropertyValues(
            "lockstep.zookeeper.namespace=ns",
            "lockstep.zookeeper.retry.base-sleep=250ms",
            "lockstep.zookeeper.retry.max-retries=5",
            "lockstep.registry.root=" + root)
        .run(
            context -> {
              CuratorFramework client = context.getBean(CuratorFramework.class);
              assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
              assertThat(client.getNamespace()).isEqualTo("ns");
              assertThat(client.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(5_000);
              assertThat(client.getZookeeperClient().getRetryPolicy())
                  .isInstanceOfSatisfying(
                      ExponentialBackoffRetry.class,
                      retry -> assertThat(retry.getBaseSleepTimeMs()).isEqualTo(250));
              await("connected").until(() -> client.getZookeeperClient().isConnected());

              LockstepLockRegistry registry = context.getBean(LockstepLockRegistry.class);
              LockstepLock lock = registry.obtain("orders/17");
              lock.lock();
              try {
                assertThat(observer.getChildren().forPath("/ns" + root + "/orders/17"))
                    .as("the hold's node, under the namespace and the configured root")
                    .hasSize(1);
                assertThat(lock.fencingToken()).isPositive();
              } finally {
                lock.unlock();
              }
              assertThat(ZooKeeperExtension.childrenOrNone(observer, "/ns" + root + "/orders/17"))
                  .isEmpty();
            });
  }

  /**
   * Curator warns at startup when the session timeout is below the connection timeout ("session
   * timeout [..] is less than connection timeout [..]"): the defaults of the bound properties are
   * Curator's own, a 60 s session and a 15 s connection timeout, and the client is built with them.
   */
  @Test
  void theDefaultTimeouts_areCuratorsOwn_theSessionTimeoutNotBelowTheConnectionTimeout() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(LockstepZookeeperAutoConfiguration.class))
        .withPropertyValues("lockstep.zookeeper.connect-string=" + zk.server().getConnectString())
        .run(
            context -> {
              LockstepZookeeperProperties properties =
                  context.getBean(LockstepZookeeperProperties.class);
              CuratorFrameworkFactory.Builder curatorDefaults = CuratorFrameworkFactory.builder();

              assertThat(properties.getSessionTimeout())
                  .isEqualTo(Duration.ofMillis(curatorDefaults.getSessionTimeoutMs()))
                  .isEqualTo(Duration.ofSeconds(60))
                  .isGreaterThanOrEqualTo(properties.getConnectionTimeout());
              assertThat(properties.getConnectionTimeout())
                  .isEqualTo(Duration.ofMillis(curatorDefaults.getConnectionTimeoutMs()))
                  .isEqualTo(Duration.ofSeconds(15));
              assertThat(
                      context
                          .getBean(CuratorFramework.class)
                          .getZookeeperClient()
                          .getConnectionTimeoutMs())
                  .isEqualTo(15_000);
            });
  }

  @Test
  void theExpiry_dropsUnusedLocks_atTheConfiguredInterval() {
    runner()
        .withPropertyValues(
            "lockstep.registry.root=" + zk.path("registry"),
            "lockstep.registry.expire-unused-older-than=0s",
            "lockstep.registry.expire-interval=100ms")
        .run(
            context -> {
              LockstepLockRegistry registry = context.getBean(LockstepLockRegistry.class);
              assertThat(context.getBean(LockstepRegistryExpiry.class).isScheduled()).isTrue();
              LockstepLock first = registry.obtain("report");
              await("the unused lock is dropped: obtaining the key again makes another")
                  .until(() -> registry.obtain("report") != first);
            });
  }

  @Test
  void aZeroExpireInterval_schedulesNothing_andStartsNoThread() {
    runner()
        .withPropertyValues("lockstep.registry.expire-interval=0")
        .run(
            context -> {
              assertThat(context.getBean(LockstepRegistryExpiry.class).isScheduled()).isFalse();
              assertThat(BootContexts.clientThreads())
                  .noneMatch(t -> t.getName().equals(LockstepRegistryExpiry.THREAD_NAME));
            });
  }

  @Test
  void theMetrics_areBoundToTheApplicationsMeterRegistry() {
    runner()
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              assertThat(context).hasSingleBean(LockstepMetrics.class);
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              assertThat(meters.find(LockstepMetrics.HOLDERS).gauge()).isNotNull();

              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              assertThat(meters.get(LockstepMetrics.HOLDERS).gauge().value()).isEqualTo(1.0);
              lock.unlock();
              assertThat(meters.get(LockstepMetrics.ACQUIRE).tag("outcome", "GRANTED").timer())
                  .satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
            });
  }

  @Test
  void closingTheContext_closesTheClient_andEndsEveryThreadItsBeansStarted() {
    Set<Thread> before = BootContexts.clientThreads();
    AtomicReference<CuratorFramework> client = new AtomicReference<>();
    runner()
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              client.set(context.getBean(CuratorFramework.class));
              await().until(() -> client.get().getZookeeperClient().isConnected());
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              lock.unlock();
              assertThat(BootContexts.clientThreads())
                  .as("the client's threads and the expiry's")
                  .hasSizeGreaterThan(before.size())
                  .anyMatch(t -> t.getName().equals(LockstepRegistryExpiry.THREAD_NAME));
            });
    assertThat(client.get().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
    await("no thread of the client or the expiry left")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(BootContexts.clientThreads()).isSubsetOf(before));
  }

  @Test
  void unreachableZooKeeper_byDefault_theContextStarts_andTheClientKeepsConnecting() {
    Set<Thread> before = BootContexts.clientThreads();
    BootContexts.runner("127.0.0.1:1")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LockstepLockRegistry.class);
              CuratorFramework client = context.getBean(CuratorFramework.class);
              assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
              assertThat(client.getZookeeperClient().isConnected()).isFalse();
            });
    await().untilAsserted(() -> assertThat(BootContexts.clientThreads()).isSubsetOf(before));
  }

  @Test
  void unreachableZooKeeper_withAStartupWait_failsStartup_andClosesTheClient() {
    Set<Thread> before = BootContexts.clientThreads();
    BootContexts.runner("127.0.0.1:1")
        .withPropertyValues("lockstep.zookeeper.startup-wait=300ms")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("127.0.0.1:1")
                    .hasMessageContaining("lockstep.zookeeper.startup-wait"));
    await().untilAsserted(() -> assertThat(BootContexts.clientThreads()).isSubsetOf(before));
  }

  @Test
  void aStartupWait_withZooKeeperUp_returnsConnected() {
    runner()
        .withPropertyValues("lockstep.zookeeper.startup-wait=10s")
        .run(
            context ->
                assertThat(
                        context.getBean(CuratorFramework.class).getZookeeperClient().isConnected())
                    .isTrue());
  }

  @Test
  void badProperties_failStartup_namingTheProperty() {
    for (String[] bad :
        new String[][] {
          {"lockstep.zookeeper.retry.max-retries=30", "lockstep.zookeeper.retry.max-retries"},
          {"lockstep.zookeeper.session-timeout=0s", "lockstep.zookeeper.session-timeout"},
          {"lockstep.zookeeper.connect-string= ", "lockstep.zookeeper.connect-string"},
          {"lockstep.zookeeper.startup-wait=-1s", "lockstep.zookeeper.startup-wait"},
          {"lockstep.registry.root=no-slash", "lockstep.registry"},
          {"lockstep.registry.cache-capacity=0", "lockstep.registry"},
          {"lockstep.registry.expire-interval=-1s", "lockstep.registry.expire-interval"},
          {"lockstep.inspector.roots=/bad//path", "lockstep.inspector"},
          {"lockstep.inspector.max-paths=0", "lockstep.inspector"},
        }) {
      boolean endpoint = bad[0].startsWith("lockstep.inspector");
      runner()
          .withPropertyValues(
              bad[0], "management.endpoints.web.exposure.include=" + (endpoint ? "locks" : ""))
          .run(
              context ->
                  assertThat(context)
                      .as(bad[0])
                      .getFailure()
                      // an IllegalArgumentException (or Lockstep's BadProperty, one) naming it
                      .hasStackTraceContaining("Exception: " + bad[1])
                      .hasStackTraceContaining(bad[1]));
    }
  }

  /** A bean with a {@code @Locked} method, for the auto-configured post processor to advise. */
  public static class Invoicing {
    private final CuratorFramework observer;
    private final String root;

    public Invoicing(CuratorFramework observer, String root) {
      this.observer = observer;
      this.root = root;
    }

    /** The call's token, after checking that the key's lock node exists during the call. */
    @Locked(key = "'invoices/' + #p0")
    public long bill(String invoice) throws Exception {
      assertThat(observer.getChildren().forPath(root + "/invoices/" + invoice))
          .as("the call's hold is a node of the key's lock")
          .hasSize(1);
      return LockedCall.current().fencingToken();
    }
  }

  @Test
  void lockedMethods_runUnderTheirKeysLock_throughTheAutoConfiguredRegistry() throws Exception {
    String root = zk.path("registry");
    CuratorFramework observer = zk.newClient();
    runner()
        .withPropertyValues("lockstep.registry.root=" + root)
        .withBean(Invoicing.class, () -> new Invoicing(observer, root))
        .run(
            context -> {
              Invoicing invoicing = context.getBean(Invoicing.class);
              assertThat(AopUtils.isAopProxy(invoicing)).isTrue();
              long first = invoicing.bill("7");
              long second = invoicing.bill("7");
              assertThat(second).isGreaterThan(first);
              String lockPath = root + "/invoices/7";
              assertThat(ZooKeeperExtension.childrenOrNone(observer, lockPath).isEmpty())
                  .as("each call's hold is released when it returns (the directory may be reaped)")
                  .isTrue();
            });
  }

  /** A scheduled job's method, for the skip counter and the default time to live. */
  public static class Nightly {
    /** Returns the call's hold. */
    @Locked(key = "'nightly'", whenBusy = Locked.WhenBusy.SKIP)
    public LockHold run() {
      return LockedCall.current();
    }
  }

  @Test
  void skippedLockedCalls_areCountedAsAMeter_andTheDefaultTtlIsAProperty() throws Exception {
    String root = zk.path("registry");
    ReentrantMutex otherInstance = new ReentrantMutex(zk.newClient(), root + "/nightly");
    runner()
        .withPropertyValues("lockstep.registry.root=" + root, "lockstep.locked.default-ttl=20m")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(Nightly.class, Nightly::new)
        .run(
            context -> {
              LockedBeanPostProcessor locked = context.getBean(LockedBeanPostProcessor.class);
              assertThat(locked.getDefaultTtl()).isEqualTo(Duration.ofMinutes(20));
              Nightly nightly = context.getBean(Nightly.class);
              await("runs (a starved machine may skip a call too)")
                  .until(() -> nightly.run() != null);
              long before = locked.skips().count("Nightly.run");
              otherInstance.acquire();
              try {
                assertThat(nightly.run()).as("skipped").isNull();
                assertThat(nightly.run()).as("skipped").isNull();
              } finally {
                otherInstance.release();
              }
              assertThat(locked.skips().count("Nightly.run")).isEqualTo(before + 2);
              FunctionCounter skips =
                  context
                      .getBean(MeterRegistry.class)
                      .get("lockstep.locked.skips")
                      .tag("method", "Nightly.run")
                      .functionCounter();
              assertThat(skips.count()).isEqualTo((double) before + 2);
            });
  }
}
