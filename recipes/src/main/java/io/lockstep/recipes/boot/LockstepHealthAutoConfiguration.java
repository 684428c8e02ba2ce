package io.lockstep.recipes.boot;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code lockstep} health indicator ({@link LockstepHealthIndicator}) of
 * the application's Curator client, when Spring Boot's health module is on the class path. It backs
 * off when the application defines a {@code LockstepHealthIndicator}, or a bean named {@code
 * lockstepHealthIndicator} or {@code lockstepHealthContributor} (its own {@code lockstep} health),
 * and when {@code management.health.lockstep.enabled} is {@code false} (or {@code
 * management.health.defaults.enabled} is, without the former).
 */
@AutoConfiguration(after = LockstepZookeeperAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnSingleCandidate(CuratorFramework.class)
public final class LockstepHealthAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LockstepHealthAutoConfiguration() {}

  /**
   * The health indicator, reported as {@code lockstep}.
   *
   * @param client the application's Curator client
   * @return the indicator, closed with the context
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnEnabledHealthIndicator("lockstep") // here: read only with the health module present
  @ConditionalOnMissingBean(
      value = LockstepHealthIndicator.class,
      name = {"lockstepHealthIndicator", "lockstepHealthContributor"})
  public LockstepHealthIndicator lockstepHealthIndicator(CuratorFramework client) {
    return new LockstepHealthIndicator(client);
  }
}
