package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.micrometer.LockstepObservations;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Each bean of Lockstep's auto-configuration backs off when the application defines its own, can be
 * turned off by its property, and is left out when the library it adapts is not on the class path;
 * the others stay.
 */
@Timeout(60)
class LockstepAutoConfigurationBackOffTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /**
   * Every bean the auto-configuration makes, by name, with Micrometer (a meter registry and an
   * observation registry) and the endpoint on.
   */
  static final List<String> ALL =
      List.of(
          "curatorFramework",
          "lockstepLockRegistry",
          "lockstepRegistryExpiry",
          "lockedBeanPostProcessor",
          "lockstepMetrics",
          "lockstepLockedSkipMeters",
          "lockstepObservations",
          "lockstepHealthIndicator",
          "locksEndpoint");

  private ApplicationContextRunner runner() {
    return BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues("management.endpoints.web.exposure.include=locks")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(ObservationRegistry.class, ObservationRegistry::create);
  }

  @Test
  void everyBean_isMade_whenNothingIsTurnedOff() {
    runner()
        .run(
            context ->
                assertThat(context.getBeanNamesForType(Object.class))
                    .contains(ALL.toArray(String[]::new)));
  }

  /**
   * A setting (a property, or a package hidden from the class path) and the beans it leaves out.
   */
  record Case(String setting, List<String> absent) {
    @Override
    public String toString() {
      return setting;
    }
  }

  static List<Case> turnedOff() {
    return List.of(
        new Case(
            "lockstep.zookeeper.enabled=false",
            ALL.stream().filter(name -> !name.equals("lockedBeanPostProcessor")).toList()),
        new Case(
            "lockstep.registry.enabled=false",
            List.of("lockstepLockRegistry", "lockstepRegistryExpiry")),
        new Case(
            "lockstep.locked.enabled=false",
            List.of("lockedBeanPostProcessor", "lockstepLockedSkipMeters")),
        new Case(
            "lockstep.metrics.enabled=false",
            List.of("lockstepMetrics", "lockstepLockedSkipMeters")),
        new Case("lockstep.observations.enabled=false", List.of("lockstepObservations")),
        new Case("management.health.lockstep.enabled=false", List.of("lockstepHealthIndicator")),
        new Case("management.health.defaults.enabled=false", List.of("lockstepHealthIndicator")),
        new Case("management.endpoint.locks.access=NONE", List.of("locksEndpoint")),
        new Case("management.endpoints.web.exposure.include=health", List.of("locksEndpoint")));
  }

  @ParameterizedTest
  @MethodSource("turnedOff")
  void aPropertySetToOff_leavesOutItsBeans_andKeepsTheOthers(Case off) {
    runner()
        .withPropertyValues(off.setting())
        .run(context -> assertOnlyAbsent(context, off.absent(), off.setting()));
  }

  static List<Case> withoutLibraries() {
    return List.of(
        new Case(
            "org.springframework.integration",
            List.of(
                "lockstepLockRegistry",
                "lockstepRegistryExpiry",
                "lockedBeanPostProcessor",
                "lockstepLockedSkipMeters")),
        new Case("io.micrometer.observation", List.of("lockstepObservations")),
        new Case("org.springframework.boot.health", List.of("lockstepHealthIndicator")),
        new Case("org.springframework.boot.actuate", List.of("locksEndpoint")));
  }

  @ParameterizedTest
  @MethodSource("withoutLibraries")
  void aLibraryNotOnTheClassPath_leavesOutItsBeans_andKeepsTheOthers(Case without) {
    runner()
        .withClassLoader(new FilteredClassLoader(without.setting()))
        .run(context -> assertOnlyAbsent(context, without.absent(), without.setting()));
  }

  /** The context started, without the beans {@code absent} and with every other of {@link #ALL}. */
  private static void assertOnlyAbsent(
      AssertableApplicationContext context, List<String> absent, String why) {
    assertThat(context).hasNotFailed();
    for (String name : ALL) {
      if (absent.contains(name)) {
        assertThat(context).as(why).doesNotHaveBean(name);
      } else {
        assertThat(context).as(why).hasBean(name);
      }
    }
  }

  @Test
  void withoutMicrometer_thereAreNoMetrics() {
    BootContexts.runner(zk.server().getConnectString())
        .withClassLoader(new FilteredClassLoader("io.micrometer"))
        .run(
            context ->
                assertThat(context)
                    .hasNotFailed()
                    .doesNotHaveBean("lockstepMetrics")
                    .doesNotHaveBean("lockstepObservations")
                    .hasBean("lockstepLockRegistry")
                    .hasBean("lockstepHealthIndicator"));
  }

  @Test
  void theApplicationsClient_replacesTheAutoConfiguredOne_andTheOtherBeansUseIt() {
    CuratorFramework own = zk.newClient();
    runner()
        .withBean("ownClient", CuratorFramework.class, () -> own)
        .run(
            context -> {
              assertThat(context).doesNotHaveBean("curatorFramework");
              assertThat(context.getBean(CuratorFramework.class)).isSameAs(own);
              LockstepLockRegistry registry = context.getBean(LockstepLockRegistry.class);
              var lock = registry.obtain("k");
              lock.lock();
              try {
                assertThat(lock.fencedLock().getParticipantNodes()).hasSize(1);
                assertThat(context.getBean(LocksEndpoint.class).locks().roots().get(0).locks())
                    .singleElement()
                    .satisfies(
                        l ->
                            assertThat(l.holders().get(0).sessionId())
                                .isEqualTo(
                                    "0x"
                                        + Long.toHexString(
                                            own.getZookeeperClient()
                                                .getZooKeeper()
                                                .getSessionId())));
              } finally {
                lock.unlock();
              }
            });
  }

  @Test
  void theApplicationsBeans_replaceTheAutoConfiguredOnes() {
    runner()
        .withBean("ownRegistry", LockstepLockRegistry.class, this::ownRegistry)
        .withBean("ownMetrics", LockstepMetrics.class, this::ownMetrics)
        .withBean("ownObservations", LockstepObservations.class, this::ownObservations)
        .withBean(
            "lockstepHealthIndicator",
            HealthIndicator.class,
            () -> () -> Health.up().withDetail("own", true).build())
        .withBean("ownEndpoint", LocksEndpoint.class, this::ownEndpoint)
        .run(
            context -> {
              assertThat(context)
                  .hasSingleBean(LockstepLockRegistry.class)
                  .hasBean("ownRegistry")
                  .doesNotHaveBean("lockstepLockRegistry")
                  .hasSingleBean(LockstepMetrics.class)
                  .hasBean("ownMetrics")
                  .hasSingleBean(LockstepObservations.class)
                  .hasBean("ownObservations")
                  .doesNotHaveBean(LockstepHealthIndicator.class)
                  .hasSingleBean(LocksEndpoint.class)
                  .hasBean("ownEndpoint");
              assertThat(
                      context
                          .getBean("lockstepHealthIndicator", HealthIndicator.class)
                          .health()
                          .getDetails())
                  .containsEntry("own", true);
              assertThat(context.getBean(LockstepRegistryExpiry.class).isScheduled())
                  .as("the expiry serves the application's own registry")
                  .isTrue();
            });
  }

  private CuratorFramework sharedClient;

  private CuratorFramework client() {
    if (sharedClient == null) {
      sharedClient = zk.newClient();
    }
    return sharedClient;
  }

  private LockstepLockRegistry ownRegistry() {
    return new LockstepLockRegistry(client(), zk.path("own"));
  }

  private LockstepMetrics ownMetrics() {
    return new LockstepMetrics(client());
  }

  private LockstepObservations ownObservations() {
    return LockstepObservations.bind(client(), ObservationRegistry.NOOP);
  }

  private LocksEndpoint ownEndpoint() {
    return new LocksEndpoint(client(), List.of(zk.path("own")), 10);
  }
}
