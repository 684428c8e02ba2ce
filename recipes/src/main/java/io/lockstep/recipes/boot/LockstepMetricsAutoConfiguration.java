package io.lockstep.recipes.boot;

import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.spring.LockedBeanPostProcessor;
import io.lockstep.recipes.spring.LockedSkips;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of {@link LockstepMetrics}: the meters of every lock of the application's
 * Curator client, bound to the application's {@link MeterRegistry}, when Micrometer is on the class
 * path and the application has a meter registry (Spring Boot's metrics auto-configuration makes
 * one, and runs first). It backs off when the application defines a {@code LockstepMetrics} bean of
 * its own (to tag paths, for instance), and when {@code lockstep.metrics.enabled} is {@code false}.
 * With a {@code LockedBeanPostProcessor} in the context, it also counts the {@code @Locked} calls
 * skipped because another instance held the lock ({@code lockstep.locked.skips}).
 */
@AutoConfiguration(
    after = {LockstepZookeeperAutoConfiguration.class, LockstepLockedAutoConfiguration.class},
    afterName = {
      "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure"
          + ".CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple"
          + ".SimpleMetricsExportAutoConfiguration"
    })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnSingleCandidate(CuratorFramework.class)
@ConditionalOnBooleanProperty(name = "lockstep.metrics.enabled", matchIfMissing = true)
public final class LockstepMetricsAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LockstepMetricsAutoConfiguration() {}

  /**
   * The meters of the client's locks, bound to {@code meterRegistry} (Spring Boot binds them to its
   * other registries too, as every {@code MeterBinder} bean).
   *
   * @param client the application's Curator client
   * @param meterRegistry the application's meter registry
   * @return the metrics, closed with the context (which removes their gauges), or at once when the
   *     binding fails
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnSingleCandidate(MeterRegistry.class)
  @ConditionalOnMissingBean
  public LockstepMetrics lockstepMetrics(CuratorFramework client, MeterRegistry meterRegistry) {
    LockstepMetrics metrics = new LockstepMetrics(client);
    try {
      metrics.bindTo(meterRegistry);
    } catch (RuntimeException e) { // no bean, so no close with the context: stop observing here
      metrics.close();
      throw e;
    }
    return metrics;
  }

  /**
   * The meter {@code lockstep.locked.skips}, a counter per method (tag {@code method}, as {@code
   * SimpleClassName.method}): the {@code @Locked} calls skipped because another holder had the
   * lock, read from the {@link LockedSkips} of the context's {@link LockedBeanPostProcessor}. A
   * method's counter appears at its first skip. Made when the context has such a post processor.
   * The binder listens to the skips once, however many registries it is bound to, and stops when
   * the context closes (the counters stay).
   *
   * @param locked the post processor of {@code @Locked} methods, if the context has one
   * @param meterRegistry the application's meter registry
   * @return the binder, bound to {@code meterRegistry} already (binding it again adds nothing),
   *     closed with the context
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnSingleCandidate(MeterRegistry.class)
  @ConditionalOnBean(LockedBeanPostProcessor.class)
  @ConditionalOnMissingBean(name = "lockstepLockedSkipMeters")
  public MeterBinder lockstepLockedSkipMeters(
      ObjectProvider<LockedBeanPostProcessor> locked, MeterRegistry meterRegistry) {
    LockedSkipMeters binder =
        new LockedSkipMeters(
            () -> {
              LockedBeanPostProcessor processor = locked.getIfUnique();
              return processor == null ? null : processor.skips();
            });
    binder.bindTo(meterRegistry);
    return binder;
  }
}
