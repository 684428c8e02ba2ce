package io.lockstep.recipes.boot;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of a started Curator client from the {@code lockstep.zookeeper} properties
 * ({@link LockstepZookeeperProperties}), closed when the context closes. It backs off when the
 * application defines a {@link CuratorFramework} bean of its own, and when {@code
 * lockstep.zookeeper.enabled} is {@code false}.
 *
 * <p><b>ZooKeeper unreachable at startup.</b> Curator's {@code start()} does not wait for a
 * connection, and by default neither does this bean: the context starts, the client keeps
 * connecting in the background, a lock acquired meanwhile waits within its budget (or fails once
 * the client's retry policy gives up), and the health indicator reports DOWN until the client is
 * connected. With {@code lockstep.zookeeper.startup-wait} positive, creating the bean waits up to
 * that long for the first connection and fails startup if it is not made by then (the client is
 * closed first), for a service that should not run without ZooKeeper.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "lockstep.zookeeper.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockstepZookeeperProperties.class)
public final class LockstepZookeeperAutoConfiguration {
  /** The longest duration a Curator setting in milliseconds takes (an int). */
  private static final Duration MOST = Duration.ofMillis(Integer.MAX_VALUE);

  private static final Logger log =
      LoggerFactory.getLogger(LockstepZookeeperAutoConfiguration.class);

  /** Creates the configuration; Spring does. */
  public LockstepZookeeperAutoConfiguration() {}

  /**
   * The Curator client: built from {@code properties}, started, and connected when {@code
   * lockstep.zookeeper.startup-wait} asks to wait.
   *
   * @param properties the {@code lockstep.zookeeper} properties
   * @param environment where unknown {@code lockstep.*} keys are looked for (each is logged as a
   *     warning: a mistyped key is read by nothing)
   * @return the started client, closed with the context
   * @throws IllegalArgumentException if a property is out of range, naming it
   * @throws IllegalStateException if the startup wait ran out before a connection, or was
   *     interrupted
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public CuratorFramework curatorFramework(
      LockstepZookeeperProperties properties, Environment environment) {
    Set<String> unknown = UnknownProperties.of(environment);
    if (!unknown.isEmpty()) {
      log.warn(
          "Unknown Lockstep properties, read by nothing (mistyped?): {}; see docs/spring-boot.md"
              + " for the lockstep.* properties",
          unknown);
    }
    CuratorFramework client = builder(properties).build();
    client.start();
    Duration wait = properties.getStartupWait();
    if (wait.isZero()) {
      return client;
    }
    boolean connected;
    try {
      connected = client.blockUntilConnected(millis(wait, "startup-wait"), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      client.close();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for ZooKeeper at startup", e);
    }
    if (!connected) {
      client.close();
      throw new LockstepStartupFailure.NotReachedException(
          properties.getConnectString(),
          "ZooKeeper at "
              + properties.getConnectString()
              + " not reached within lockstep.zookeeper.startup-wait="
              + wait);
    }
    log.info("Connected to ZooKeeper at {}", properties.getConnectString());
    return client;
  }

  /** The client's builder: every property checked before anything is built. */
  static CuratorFrameworkFactory.Builder builder(LockstepZookeeperProperties properties) {
    String connectString = properties.getConnectString();
    if (connectString == null || connectString.isBlank()) {
      throw new LockstepStartupFailure.BadPropertyException(
          "lockstep.zookeeper.connect-string",
          "lockstep.zookeeper.connect-string must not be blank");
    }
    LockstepZookeeperProperties.Retry retry = properties.getRetry();
    int maxRetries = retry.getMaxRetries();
    if (maxRetries < 0 || maxRetries > 29) {
      throw new LockstepStartupFailure.BadPropertyException(
          "lockstep.zookeeper.retry.max-retries",
          "lockstep.zookeeper.retry.max-retries must be from 0 to 29: " + maxRetries);
    }
    int baseSleep = millis(retry.getBaseSleep(), "retry.base-sleep");
    ExponentialBackoffRetry policy =
        retry.getMaxSleep() == null
            ? new ExponentialBackoffRetry(baseSleep, maxRetries)
            : new ExponentialBackoffRetry(
                baseSleep, maxRetries, millis(retry.getMaxSleep(), "retry.max-sleep"));
    millis(properties.getStartupWait(), "startup-wait", true);
    return CuratorFrameworkFactory.builder()
        .connectString(connectString)
        .sessionTimeoutMs(millis(properties.getSessionTimeout(), "session-timeout"))
        .connectionTimeoutMs(millis(properties.getConnectionTimeout(), "connection-timeout"))
        .retryPolicy(policy)
        .namespace(properties.getNamespace());
  }

  private static int millis(Duration duration, String property) {
    return millis(duration, property, false);
  }

  /** A property's duration in whole milliseconds: positive (or zero when allowed), an int. */
  private static int millis(Duration duration, String property, boolean zeroAllowed) {
    String name = "lockstep.zookeeper." + property;
    if (duration == null) {
      throw new LockstepStartupFailure.BadPropertyException(name, name + " must be set");
    }
    Duration least = zeroAllowed ? Duration.ZERO : Duration.ofMillis(1);
    if (duration.compareTo(least) < 0 || duration.compareTo(MOST) > 0) {
      throw new LockstepStartupFailure.BadPropertyException(
          name,
          name
              + " must be from "
              + least.toMillis()
              + " ms to "
              + MOST.toMillis()
              + " ms: "
              + duration);
    }
    return (int) duration.toMillis();
  }
}
