package io.lockstep.recipes.locks;

import java.util.Objects;

/**
 * One transition of a granted lock, as delivered to a {@link LockStateListener}.
 *
 * @param lockPath the lock's path (for a multi-lock, its paths in brackets)
 * @param state the state the lock has just entered
 * @param fencingToken the fencing token of the hold that changed state; 0 for a hold with local
 *     handoff that has not taken its token yet (see {@link LocalHandoff})
 */
public record LockStateChange(String lockPath, LockState state, long fencingToken) {
  /**
   * Checks the components.
   *
   * @param lockPath the lock's path
   * @param state the new state
   * @param fencingToken the hold's fencing token
   * @throws NullPointerException if {@code lockPath} or {@code state} is null
   */
  public LockStateChange {
    Objects.requireNonNull(lockPath, "lockPath");
    Objects.requireNonNull(state, "state");
  }
}
