package io.lockstep.recipes.locks;

/**
 * Hears every {@link LockState} transition of the holds of one lock object.
 *
 * <p>Listeners never run on ZooKeeper's event thread. A listener added without an executor runs on
 * a Lockstep thread, and hears the changes of one hold one at a time, in the order they happened
 * (HELD is heard before the acquire returns, RELEASED before {@code release()} returns). A listener
 * added with an executor runs there. Keep listeners quick: a slow one delays the next notices of
 * its lock. Which thread runs each kind of callback: <a
 * href="https://github.com/lockstep/lockstep/blob/main/docs/threads.md">Threads: who runs your
 * code</a>.
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
