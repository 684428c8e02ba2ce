package io.lockstep.recipes.boot;

import io.lockstep.recipes.spring.LockstepLockRegistry;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the {@code locks} Actuator endpoint ({@link LocksEndpoint}) on the
 * application's Curator client, from the {@code lockstep.inspector} properties ({@link
 * LockstepInspectorProperties}), when Spring Boot's Actuator is on the class path. As every
 * endpoint, it is created only when available: its access not {@code none} ({@code
 * management.endpoint.locks.access}) and exposed ({@code
 * management.endpoints.web.exposure.include=locks}, or over JMX). It backs off when the application
 * defines a {@code LocksEndpoint} of its own.
 */
@AutoConfiguration(after = LockstepZookeeperAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnSingleCandidate(CuratorFramework.class)
@EnableConfigurationProperties(LockstepInspectorProperties.class)
public final class LocksEndpointAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LocksEndpointAutoConfiguration() {}

  /**
   * The endpoint, listing the locks under {@code lockstep.inspector.roots}, or under the registry's
   * root ({@code lockstep.registry.root}, by default {@value LockstepLockRegistry#DEFAULT_ROOT})
   * when no root is configured.
   *
   * @param client the application's Curator client
   * @param properties the {@code lockstep.inspector} properties
   * @param environment where the registry's root is read
   * @return the endpoint
   * @throws IllegalArgumentException if a root is no valid ZooKeeper path or the bound is not
   *     positive, naming the property
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  public LocksEndpoint locksEndpoint(
      CuratorFramework client, LockstepInspectorProperties properties, Environment environment) {
    List<String> roots = properties.getRoots();
    boolean configured = roots != null && !roots.isEmpty();
    if (!configured) {
      roots =
          List.of(
              environment.getProperty("lockstep.registry.root", LockstepLockRegistry.DEFAULT_ROOT));
    }
    try {
      return new LocksEndpoint(client, roots, properties.getMaxPaths());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "lockstep.inspector"
              + (configured ? "" : " (roots: none configured, so lockstep.registry.root)")
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
