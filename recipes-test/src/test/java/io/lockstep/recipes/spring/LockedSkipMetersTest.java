package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.boot.BootContexts;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configured meter of skipped {@code @Locked} calls ({@code lockstepLockedSkipMeters}):
 * one listener on the context's {@link LockedSkips} however often and wherever it is bound, and
 * none left once the context is closed. In this package for {@link LockedSkips#listenerCount()}.
 */
@Timeout(60)
class LockedSkipMetersTest {
  private static final String SKIPS = "lockstep.locked.skips";

  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ApplicationContextRunner runner() {
    return BootContexts.runner(zk.server().getConnectString())
        .withPropertyValues("lockstep.registry.root=" + zk.path("registry"));
  }

  @Test
  void withBootsMetrics_theSkipMetersListenOnce_andNotAfterTheContextCloses() {
    AtomicReference<LockedSkips> skips = new AtomicReference<>();
    runner()
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasBean("lockstepLockedSkipMeters");
              skips.set(context.getBean(LockedBeanPostProcessor.class).skips());
              assertThat(skips.get().listenerCount())
                  .as("one listener, though Boot binds the binder again")
                  .isEqualTo(1);
              skips.get().skipped("Report.run", "daily");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get(SKIPS)
                          .tag("method", "Report.run")
                          .functionCounter()
                          .count())
                  .isEqualTo(1.0);
            });
    assertThat(skips.get().listenerCount()).as("listeners left after the close").isZero();
  }

  @Test
  void bindingAgain_orToMoreRegistries_addsNoListener_andEachRegistryCountsTheSkips() {
    AtomicReference<LockedSkips> skips = new AtomicReference<>();
    runner()
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              skips.set(context.getBean(LockedBeanPostProcessor.class).skips());
              skips.get().skipped("Report.run", "daily"); // before the other registry's binding
              MeterBinder binder = context.getBean("lockstepLockedSkipMeters", MeterBinder.class);
              MeterRegistry own = context.getBean(MeterRegistry.class);
              MeterRegistry other = new SimpleMeterRegistry();
              binder.bindTo(own);
              binder.bindTo(other);
              binder.bindTo(other);
              assertThat(skips.get().listenerCount()).isEqualTo(1);

              skips.get().skipped("Export.run", "weekly");
              for (MeterRegistry registry : new MeterRegistry[] {own, other}) {
                assertThat(registry.get(SKIPS).tag("method", "Report.run").functionCounter())
                    .satisfies(counter -> assertThat(counter.count()).isEqualTo(1.0));
                assertThat(registry.get(SKIPS).tag("method", "Export.run").functionCounter())
                    .satisfies(counter -> assertThat(counter.count()).isEqualTo(1.0));
              }
            });
    assertThat(skips.get().listenerCount()).as("listeners left after the close").isZero();
  }
}
