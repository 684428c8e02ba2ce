package io.lockstep.recipes.locks;

/**
 * Hears every {@link LockState} transition of the holds of one lock object.
 *
 * <p>Listeners run on the executor given when they were added, or else on the thread that observed
 * the change (often ZooKeeper's event thread): they must be quick and must never block on a lock.
 */
@FunctionalInterface
public interface LockStateListener {
  /**
   * Called after a hold of the lock moved to a new state.
   *
   * @param change the lock, the new state and the hold's fencing token
   */
  void stateChanged(LockStateChange change);
}
