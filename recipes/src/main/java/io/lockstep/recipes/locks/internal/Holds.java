package io.lockstep.recipes.locks.internal;

/** Who owns the holds of a lock object: threads ({@link ThreadBoundLock}) or the object itself. */
public interface Holds {
  /** The caller's hold, or an {@link IllegalMonitorStateException} naming the lock. */
  Acquisition requireCurrent();

  /** Releases the caller's hold. */
  void release();

  /** Whether the lock object holds the lock in this process. */
  boolean isAcquiredInThisProcess();

  /** What the lock object's acquisitions share. */
  LockContext context();
}
