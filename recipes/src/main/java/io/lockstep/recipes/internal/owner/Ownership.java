package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.LockSettings;

/**
 * Who owns the holds of one lock object, and how a new hold is taken: a table of holds per thread
 * ({@link ThreadOwnership}) or the one hold of the object ({@link ObjectOwnership}). The recipes'
 * public methods are one line each over this.
 */
public interface Ownership {
  /**
   * Acquires for the caller.
   *
   * @param budget the caller's budget, from when it called; none to wait as long as it takes
   * @return false if the budget ran out
   */
  boolean acquire(Budget budget) throws InterruptedException;

  /** Acquires for the caller, ignoring interrupts (the flag is set again on return). */
  void acquireUninterruptibly();

  /** Releases the caller's hold (one count of it, for a reentrant hold). */
  void release();

  /** The caller's hold, or an {@link IllegalMonitorStateException} naming the lock. */
  Attempt current();

  /** How many times the caller holds the lock; 0 if not at all. */
  int holdCount();

  /** Whether the lock object holds the lock in this process (through a thread or a handle). */
  boolean isAcquiredInThisProcess();

  /** What the lock object's acquisitions share. */
  default LockSettings settings() {
    return handles().settings();
  }

  /** Where the holds of this lock object owned by handles come from. */
  HoldSource handles();

  /**
   * Closes the lock object: no new hold starts (acquires throw {@link IllegalStateException});
   * holds and attempts under way are not touched. Idempotent.
   */
  void close();
}
