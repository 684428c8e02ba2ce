package io.lockstep.recipes.boot;

import io.lockstep.recipes.micrometer.LockstepObservations;
import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of {@link LockstepObservations}: an observation of each wait for and each hold
 * of every lock of the application's Curator client, in the application's {@link
 * ObservationRegistry}, when Micrometer's Observation API is on the class path and the application
 * has one observation registry (Spring Boot's observation auto-configuration makes one, and runs
 * first; with a tracer on the class path the observations become spans). It backs off when the
 * application defines a {@code LockstepObservations} bean of its own, and when {@code
 * lockstep.observations.enabled} is {@code false}.
 */
@AutoConfiguration(
    after = LockstepZookeeperAutoConfiguration.class,
    afterName =
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnSingleCandidate(CuratorFramework.class)
@ConditionalOnBooleanProperty(name = "lockstep.observations.enabled", matchIfMissing = true)
public final class LockstepObservationAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LockstepObservationAutoConfiguration() {}

  /**
   * The observations of the client's locks, in {@code observationRegistry}.
   *
   * @param client the application's Curator client
   * @param observationRegistry the application's observation registry
   * @return the binding, closed with the context (which stops the observations under way)
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnSingleCandidate(ObservationRegistry.class)
  @ConditionalOnMissingBean
  public LockstepObservations lockstepObservations(
      CuratorFramework client, ObservationRegistry observationRegistry) {
    return LockstepObservations.bind(client, observationRegistry);
  }
}
