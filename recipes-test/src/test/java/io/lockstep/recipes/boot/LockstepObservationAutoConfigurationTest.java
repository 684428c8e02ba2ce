package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepObservations;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configuration of {@link LockstepObservations}: made with the application's observation
 * registry, backing off for the application's own, off by its property, absent without a registry
 * or without Micrometer's Observation API, and closed with the context.
 */
@Timeout(60)
class LockstepObservationAutoConfigurationTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ApplicationContextRunner runner() {
    return BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"));
  }

  @Test
  void theApplicationsRegistry_observesTheLocks_ofTheAutoConfiguredClient() {
    TestObservationRegistry registry = TestObservationRegistry.create();
    runner()
        .withBean(ObservationRegistry.class, () -> registry)
        .run(
            context -> {
              assertThat(context).hasSingleBean(LockstepObservations.class);
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              Observation request = Observation.start("request", registry);
              try (Observation.Scope scope = request.openScope()) {
                lock.lock();
                lock.unlock();
              } finally {
                request.stop();
              }
              TestObservationRegistryAssert.assertThat(registry)
                  .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
                  .that()
                  .hasParentObservationEqualTo(request)
                  .hasLowCardinalityKeyValue("outcome", "GRANTED")
                  .backToTestObservationRegistry()
                  .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
                  .that()
                  .hasLowCardinalityKeyValue("state", "RELEASED")
                  .hasBeenStopped();
            });
  }

  /**
   * With Spring Boot's own observation auto-configuration making the registry: Boot gives it the
   * application's handlers, and the locks' observations reach them.
   */
  @Test
  void bootsObservationRegistry_isTheOneObserved() {
    List<String> handled = new CopyOnWriteArrayList<>();
    ObservationHandler<Observation.Context> handler =
        new ObservationHandler<>() {
          @Override
          public void onStop(Observation.Context context) {
            handled.add(context.getName());
          }

          @Override
          public boolean supportsContext(Observation.Context context) {
            return true;
          }
        };
    runner()
        .withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class))
        .withBean("recordingHandler", ObservationHandler.class, () -> handler)
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(ObservationRegistry.class);
              assertThat(context).hasSingleBean(LockstepObservations.class);
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              lock.unlock();
              assertThat(handled)
                  .containsExactly(LockstepObservations.ACQUIRE, LockstepObservations.HOLD);
            });
  }

  @Test
  void closingTheContext_closesTheObservations() {
    AtomicReference<LockstepObservations> observations = new AtomicReference<>();
    runner()
        .withBean(ObservationRegistry.class, TestObservationRegistry::create)
        .run(
            context -> {
              observations.set(context.getBean(LockstepObservations.class));
              assertThat(observations.get().toString()).doesNotContain("closed");
            });
    assertThat(observations.get().toString()).endsWith(", closed]");
  }

  @Test
  void theApplicationsOwnBinding_replacesTheAutoConfiguredOne() throws Exception {
    CuratorFramework own = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations mine = LockstepObservations.bind(own, registry);
    ReentrantMutex lock = new ReentrantMutex(own, zk.path("a"));
    runner()
        .withBean("ownClient", CuratorFramework.class, () -> own)
        .withBean(ObservationRegistry.class, () -> registry)
        .withBean("myObservations", LockstepObservations.class, () -> mine)
        .run(
            context -> {
              assertThat(context)
                  .hasSingleBean(LockstepObservations.class)
                  .hasBean("myObservations")
                  .doesNotHaveBean("lockstepObservations");
              lock.acquire();
              lock.release();
              TestObservationRegistryAssert.assertThat(registry)
                  .as("observed once: by the application's binding alone")
                  .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.ACQUIRE, 1);
            });
    mine.close();
  }

  @Test
  void theProperty_turnsThemOff() {
    TestObservationRegistry registry = TestObservationRegistry.create();
    runner()
        .withBean(ObservationRegistry.class, () -> registry)
        .withPropertyValues("lockstep.observations.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed().doesNotHaveBean(LockstepObservations.class);
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              lock.unlock();
              TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
            });
  }

  @Test
  void withoutAnObservationRegistry_orWithoutItsClass_thereAreNone() {
    runner()
        .run(
            context ->
                assertThat(context)
                    .hasNotFailed()
                    .doesNotHaveBean(LockstepObservations.class)
                    .hasBean("curatorFramework"));
    runner()
        .withBean(ObservationRegistry.class, TestObservationRegistry::create)
        .withClassLoader(new FilteredClassLoader("io.micrometer.observation"))
        .run(
            context ->
                assertThat(context)
                    .hasNotFailed()
                    .doesNotHaveBean(LockstepObservations.class)
                    .hasBean("curatorFramework"));
  }
}
