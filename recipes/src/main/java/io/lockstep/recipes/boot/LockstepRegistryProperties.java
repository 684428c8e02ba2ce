package io.lockstep.recipes.boot;

import io.lockstep.recipes.spring.LockstepLockRegistry;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The properties of the auto-configured {@link LockstepLockRegistry}, under {@code
 * lockstep.registry}: its root, its cache bound, and the scheduled expiry of unused locks.
 */
@ConfigurationProperties("lockstep.registry")
public final class LockstepRegistryProperties {
  /** Whether to create a lock registry when the application defines no Spring LockRegistry. */
  private boolean enabled = true;

  /**
   * The path under which the keys' locks live: a key's lock is root + "/" + key, as for Spring's
   * ZookeeperLockRegistry with the same root.
   */
  private String root = "/SpringIntegration-LockRegistry"; // LockstepLockRegistry.DEFAULT_ROOT

  /**
   * Hashed directory levels between the root and a key's lock (1 to 4, see KeyLayout.hashed); 0
   * keeps Spring's mapping, root + "/" + key. Every process on the root must use the same value.
   */
  private int hashedLevels;

  /** How many unused locks the registry keeps (locks in use are always kept). */
  private int cacheCapacity = 30_000; // LockstepLockRegistry.DEFAULT_CACHE_CAPACITY

  /** Unused locks last obtained longer ago than this are dropped by the scheduled expiry. */
  private Duration expireUnusedOlderThan = Duration.ofMinutes(10);

  /** How often the expiry runs; 0 for no scheduled expiry (and no thread). */
  private Duration expireInterval = Duration.ofMinutes(1);

  /** Creates the properties with their defaults. */
  public LockstepRegistryProperties() {}

  /**
   * Whether the registry is created.
   *
   * @return true unless turned off
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Sets whether the registry is created.
   *
   * @param enabled false for no registry
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * The registry's root.
   *
   * @return the root path
   */
  public String getRoot() {
    return root;
  }

  /**
   * Sets the registry's root.
   *
   * @param root an absolute ZooKeeper path
   */
  public void setRoot(String root) {
    this.root = root;
  }

  /**
   * The hashed directory levels of the keys' lock paths, 0 for Spring's mapping.
   *
   * @return the levels
   */
  public int getHashedLevels() {
    return hashedLevels;
  }

  /**
   * Sets the hashed directory levels of the keys' lock paths.
   *
   * @param hashedLevels 0 for Spring's mapping, else 1 to 4
   */
  public void setHashedLevels(int hashedLevels) {
    this.hashedLevels = hashedLevels;
  }

  /**
   * How many unused locks the registry keeps.
   *
   * @return the cache capacity
   */
  public int getCacheCapacity() {
    return cacheCapacity;
  }

  /**
   * Sets how many unused locks the registry keeps.
   *
   * @param cacheCapacity the capacity, positive
   */
  public void setCacheCapacity(int cacheCapacity) {
    this.cacheCapacity = cacheCapacity;
  }

  /**
   * The age beyond which the scheduled expiry drops an unused lock.
   *
   * @return the age
   */
  public Duration getExpireUnusedOlderThan() {
    return expireUnusedOlderThan;
  }

  /**
   * Sets the age beyond which the scheduled expiry drops an unused lock.
   *
   * @param expireUnusedOlderThan the age, zero or positive
   */
  public void setExpireUnusedOlderThan(Duration expireUnusedOlderThan) {
    this.expireUnusedOlderThan = expireUnusedOlderThan;
  }

  /**
   * How often the expiry runs.
   *
   * @return the interval; zero for no scheduled expiry
   */
  public Duration getExpireInterval() {
    return expireInterval;
  }

  /**
   * Sets how often the expiry runs.
   *
   * @param expireInterval the interval, positive, or zero for no scheduled expiry
   */
  public void setExpireInterval(Duration expireInterval) {
    this.expireInterval = expireInterval;
  }
}
