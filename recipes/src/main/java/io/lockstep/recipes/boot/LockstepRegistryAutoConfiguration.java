package io.lockstep.recipes.boot;

import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configuration of a {@link LockstepLockRegistry} on the application's Curator client, from
 * the {@code lockstep.registry} properties ({@link LockstepRegistryProperties}), when Spring
 * Integration is on the class path. The registry backs off when the application defines a Spring
 * {@link LockRegistry} of its own (Lockstep's or another), and when {@code
 * lockstep.registry.enabled} is {@code false}. The scheduled expiry of unused locks ({@link
 * LockstepRegistryExpiry}) serves the application's one {@code LockstepLockRegistry}, its own or
 * the auto-configured one.
 */
@AutoConfiguration(after = LockstepZookeeperAutoConfiguration.class)
@ConditionalOnClass(ExpirableLockRegistry.class)
@ConditionalOnBooleanProperty(name = "lockstep.registry.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockstepRegistryProperties.class)
public final class LockstepRegistryAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LockstepRegistryAutoConfiguration() {}

  /**
   * The lock registry, under {@code lockstep.registry.root}.
   *
   * @param client the application's Curator client
   * @param properties the {@code lockstep.registry} properties
   * @return the registry
   * @throws IllegalArgumentException if the root is no valid ZooKeeper path or the capacity is not
   *     positive, naming the property
   */
  @Bean
  @ConditionalOnSingleCandidate(CuratorFramework.class)
  @ConditionalOnMissingBean(LockRegistry.class)
  public LockstepLockRegistry lockstepLockRegistry(
      CuratorFramework client, LockstepRegistryProperties properties) {
    LockstepLockRegistry registry;
    try {
      registry = new LockstepLockRegistry(client, properties.getRoot());
      registry.setCacheCapacity(properties.getCacheCapacity());
      if (properties.getHashedLevels() != 0) {
        registry.setKeyLayout(KeyLayout.hashed(properties.getHashedLevels()));
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("lockstep.registry: " + e.getMessage(), e);
    }
    return registry;
  }

  /**
   * The scheduled expiry of the registry's unused locks.
   *
   * @param registry the application's lock registry
   * @param properties the {@code lockstep.registry} properties
   * @return the expiry, closed with the context
   * @throws IllegalArgumentException if a duration is negative, naming the property
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnSingleCandidate(LockstepLockRegistry.class)
  @ConditionalOnMissingBean
  public LockstepRegistryExpiry lockstepRegistryExpiry(
      LockstepLockRegistry registry, LockstepRegistryProperties properties) {
    Duration age = notNegative(properties.getExpireUnusedOlderThan(), "expire-unused-older-than");
    Duration interval = notNegative(properties.getExpireInterval(), "expire-interval");
    return new LockstepRegistryExpiry(registry, age, interval);
  }

  private static Duration notNegative(Duration duration, String property) {
    if (duration == null || duration.isNegative()) {
      throw new IllegalArgumentException(
          "lockstep.registry." + property + " must be zero or positive: " + duration);
    }
    return duration;
  }
}
