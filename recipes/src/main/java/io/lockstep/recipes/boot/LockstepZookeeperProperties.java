package io.lockstep.recipes.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The properties of the auto-configured Curator client, under {@code lockstep.zookeeper}: where
 * ZooKeeper is, the session and connection timeouts, the retry policy (Curator's {@code
 * ExponentialBackoffRetry}), the namespace, and how long startup waits for the first connection.
 * The defaults are Curator's own where it has one ({@code CuratorFrameworkFactory}'s timeouts) and
 * the retry policy of Curator's examples otherwise.
 */
@ConfigurationProperties("lockstep.zookeeper")
public final class LockstepZookeeperProperties {
  /**
   * Whether to create a Curator client when the application defines none. Off, the other Lockstep
   * beans need a client of the application's.
   */
  private boolean enabled = true;

  /** The ZooKeeper ensemble: comma-separated host:port pairs, optionally with a chroot path. */
  private String connectString = "localhost:2181";

  /** The session timeout the client asks for; the server may grant a different one. */
  private Duration sessionTimeout = Duration.ofSeconds(60);

  /** How long the client tries to connect before an operation fails with a connection loss. */
  private Duration connectionTimeout = Duration.ofSeconds(15);

  /** A namespace every path of the client lives under (no leading '/'); none when unset. */
  private String namespace;

  /**
   * How long startup waits for the first connection. 0: not at all (the client connects in the
   * background and locks wait within their budgets). Positive: startup fails when ZooKeeper is not
   * reached within this time.
   */
  private Duration startupWait = Duration.ZERO;

  /** The retry policy of the client's operations. */
  private final Retry retry = new Retry();

  /** Creates the properties with their defaults. */
  public LockstepZookeeperProperties() {}

  /**
   * Whether the client is created.
   *
   * @return true unless turned off
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Sets whether the client is created.
   *
   * @param enabled false to leave the client to the application
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * The ZooKeeper ensemble.
   *
   * @return the connect string
   */
  public String getConnectString() {
    return connectString;
  }

  /**
   * Sets the ZooKeeper ensemble.
   *
   * @param connectString comma-separated host:port pairs, optionally with a chroot path
   */
  public void setConnectString(String connectString) {
    this.connectString = connectString;
  }

  /**
   * The session timeout asked for.
   *
   * @return the session timeout
   */
  public Duration getSessionTimeout() {
    return sessionTimeout;
  }

  /**
   * Sets the session timeout asked for.
   *
   * @param sessionTimeout the session timeout, positive
   */
  public void setSessionTimeout(Duration sessionTimeout) {
    this.sessionTimeout = sessionTimeout;
  }

  /**
   * The connection timeout.
   *
   * @return the connection timeout
   */
  public Duration getConnectionTimeout() {
    return connectionTimeout;
  }

  /**
   * Sets the connection timeout.
   *
   * @param connectionTimeout the connection timeout, positive
   */
  public void setConnectionTimeout(Duration connectionTimeout) {
    this.connectionTimeout = connectionTimeout;
  }

  /**
   * The namespace of the client's paths.
   *
   * @return the namespace, or null for none
   */
  public String getNamespace() {
    return namespace;
  }

  /**
   * Sets the namespace of the client's paths.
   *
   * @param namespace the namespace, or null for none
   */
  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  /**
   * How long startup waits for the first connection.
   *
   * @return the wait; zero for none
   */
  public Duration getStartupWait() {
    return startupWait;
  }

  /**
   * Sets how long startup waits for the first connection.
   *
   * @param startupWait zero for no wait; positive to fail startup if not connected by then
   */
  public void setStartupWait(Duration startupWait) {
    this.startupWait = startupWait;
  }

  /**
   * The retry policy's properties.
   *
   * @return the retry properties
   */
  public Retry getRetry() {
    return retry;
  }

  /**
   * The retry policy of the client, under {@code lockstep.zookeeper.retry}: Curator's {@code
   * ExponentialBackoffRetry(baseSleep, maxRetries, maxSleep)}.
   */
  public static final class Retry {
    /** The sleep before the first retry; later ones sleep up to twice as long as the one before. */
    private Duration baseSleep = Duration.ofSeconds(1);

    /** How many times an operation is retried after a connection loss (at most 29). */
    private int maxRetries = 3;

    /** The longest sleep between two retries; no bound but the doubling when unset. */
    private Duration maxSleep;

    /** Creates the properties with their defaults. */
    public Retry() {}

    /**
     * The sleep before the first retry.
     *
     * @return the base sleep
     */
    public Duration getBaseSleep() {
      return baseSleep;
    }

    /**
     * Sets the sleep before the first retry.
     *
     * @param baseSleep the base sleep, positive
     */
    public void setBaseSleep(Duration baseSleep) {
      this.baseSleep = baseSleep;
    }

    /**
     * How many times an operation is retried.
     *
     * @return the number of retries
     */
    public int getMaxRetries() {
      return maxRetries;
    }

    /**
     * Sets how many times an operation is retried.
     *
     * @param maxRetries from 0 to 29
     */
    public void setMaxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
    }

    /**
     * The longest sleep between two retries.
     *
     * @return the bound, or null for none
     */
    public Duration getMaxSleep() {
      return maxSleep;
    }

    /**
     * Sets the longest sleep between two retries.
     *
     * @param maxSleep the bound, positive, or null for none
     */
    public void setMaxSleep(Duration maxSleep) {
      this.maxSleep = maxSleep;
    }
  }
}
