package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.micrometer.LockstepObservations;
import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.listen.ListenerManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;

/**
 * Closing a context of Lockstep's auto-configuration leaves nothing of its beans on an application
 * client that outlives it: no lock observer, no connection listener, and (the extension's check
 * after the test, with the client still connected) no node and no watch on the server.
 */
@Timeout(60)
class LockstepContextCloseTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** A bean with a {@code @Locked} method that skips when the lock is held elsewhere. */
  public static class Report {
    /** Returns "ran", or null when skipped. */
    @Locked(key = "'report'", whenBusy = Locked.WhenBusy.SKIP)
    public String run() {
      return "ran";
    }
  }

  @Test
  void anApplicationsClient_outlivingTheContext_keepsNoneOfItsBeansListeners() throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("registry");
    int observersBefore = size(LockObservers.of(client));
    int connectionListenersBefore = size(client.getConnectionStateListenable());
    BootContexts.runner(zk.server().getConnectString())
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class))
        .withPropertyValues(
            "lockstep.registry.root=" + root, "lockstep.registry.expire-interval=1s")
        .withBean(
            "curatorFramework",
            CuratorFramework.class,
            () -> client,
            definition -> definition.setDestroyMethodName("")) // the application closes it
        .withBean(ObservationRegistry.class, TestObservationRegistry::create)
        .withBean(Report.class, Report::new)
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(LockstepMetrics.class)
                  .hasSingleBean(LockstepObservations.class)
                  .hasSingleBean(LockstepHealthIndicator.class)
                  .hasSingleBean(LockstepRegistryExpiry.class)
                  .hasBean("lockstepLockedSkipMeters");
              assertThat(size(LockObservers.of(client)))
                  .as("the metrics', the observations' and the health's observers")
                  .isEqualTo(observersBefore + 3);
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("job");
              lock.lock();
              lock.unlock();
              Report report = context.getBean(Report.class);
              ReentrantMutex elsewhere = new ReentrantMutex(zk.newClient(), root + "/report");
              elsewhere.acquire();
              try {
                assertThat(report.run()).as("skipped: held elsewhere").isNull();
              } finally {
                elsewhere.release();
              }
              assertThat(report.run()).isEqualTo("ran");
            });
    assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
    assertThat(size(LockObservers.of(client))).as("lock observers left").isEqualTo(observersBefore);
    assertThat(size(client.getConnectionStateListenable()))
        .as("connection listeners left")
        .isEqualTo(connectionListenersBefore);
  }

  @Test
  void aMeterRegistryRefusingTheGauges_failsStartup_withNoObserverLeftOnTheApplicationsClient() {
    CuratorFramework client = zk.newClient();
    int observersBefore = size(LockObservers.of(client));
    MeterRegistry refusing = new SimpleMeterRegistry();
    refusing
        .config()
        .meterFilter(
            new MeterFilter() {
              @Override
              public Meter.Id map(Meter.Id id) {
                throw new IllegalArgumentException("refused: " + id.getName());
              }
            });
    BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"))
        .withBean(
            "curatorFramework",
            CuratorFramework.class,
            () -> client,
            definition -> definition.setDestroyMethodName(""))
        .withBean(MeterRegistry.class, () -> refusing)
        .run(
            context ->
                assertThat(context)
                    .hasFailed()
                    .getFailure()
                    .hasStackTraceContaining("refused: " + LockstepMetrics.WAITERS));
    assertThat(size(LockObservers.of(client))).as("lock observers left").isEqualTo(observersBefore);
  }

  private static int size(Listenable<?> listenable) {
    return ((ListenerManager<?, ?>) listenable).size();
  }
}
