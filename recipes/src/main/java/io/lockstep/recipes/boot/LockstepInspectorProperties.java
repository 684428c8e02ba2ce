package io.lockstep.recipes.boot;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The properties of the {@code locks} Actuator endpoint ({@link LocksEndpoint}), under {@code
 * lockstep.inspector}: the roots it lists the locks under, and how many paths it reads at most.
 */
@ConfigurationProperties("lockstep.inspector")
public final class LockstepInspectorProperties {
  /**
   * The paths under which the endpoint lists every lock, at any depth. Empty: the lock registry's
   * root (lockstep.registry.root).
   */
  private List<String> roots = new ArrayList<>();

  /**
   * How many paths the endpoint reads at most under each root (each path costs a few ZooKeeper
   * reads); beyond it the listing is marked truncated.
   */
  private int maxPaths = 1000;

  /** Creates the properties with their defaults. */
  public LockstepInspectorProperties() {}

  /**
   * The roots listed.
   *
   * @return the roots; empty for the registry's root
   */
  public List<String> getRoots() {
    return roots;
  }

  /**
   * Sets the roots listed.
   *
   * @param roots absolute ZooKeeper paths; empty for the registry's root
   */
  public void setRoots(List<String> roots) {
    this.roots = roots;
  }

  /**
   * How many paths are read at most under each root.
   *
   * @return the bound
   */
  public int getMaxPaths() {
    return maxPaths;
  }

  /**
   * Sets how many paths are read at most under each root.
   *
   * @param maxPaths the bound, positive
   */
  public void setMaxPaths(int maxPaths) {
    this.maxPaths = maxPaths;
  }
}
