package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.LockState;

/**
 * What the place shared by local holds (or a semaphore's request) hears of its own {@link
 * Acquisition}.
 */
public interface PlaceHooks {
  /** The child watch of the granting read fired: someone changed the queue. No user code. */
  void queueChanged();

  /** The hold entered {@code state} after its grant, in order with the grant's announcement. */
  void stateChanged(LockState state);
}
