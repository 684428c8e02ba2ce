package io.lockstep.recipes.locks;

import java.util.List;

/**
 * How a lock object starts an attempt, chosen when the object is built (as {@code ReentrantLock}
 * chooses its {@code Sync}): an {@link Acquisition} with a node of its own, or a member of its
 * process's {@link LocalPlace} in the queue (local handoff).
 */
interface AttemptFactory {
  /**
   * Starts an attempt in the given queues.
   *
   * @param revocationHandler run when a revocation is requested while held, or null if the lock is
   *     not revocable
   */
  Attempt start(List<Slot> slots, Runnable revocationHandler);

  /** The lock object's settings. */
  LockSettings settings();

  /** Attempts with a node of their own. */
  static AttemptFactory plain(LockSettings settings) {
    return new AttemptFactory() {
      @Override
      public Attempt start(List<Slot> slots, Runnable revocationHandler) {
        return Acquisition.start(settings, slots, revocationHandler, null);
      }

      @Override
      public LockSettings settings() {
        return settings;
      }
    };
  }

  /**
   * Attempts that take turns on the process's place in {@code slot}'s queue, handed on in memory at
   * most {@code maxInARow} times in a row while another participant may wait.
   */
  static AttemptFactory localHandoff(LockSettings settings, Slot slot, int maxInARow) {
    LocalPlace place = settings.engine().placeOf(settings.client(), slot);
    return new AttemptFactory() {
      @Override
      public Attempt start(List<Slot> slots, Runnable revocationHandler) {
        return place.join(settings, maxInARow);
      }

      @Override
      public LockSettings settings() {
        return settings;
      }
    };
  }
}
