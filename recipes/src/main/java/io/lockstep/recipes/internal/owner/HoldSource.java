package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.locks.LockHold;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Where a lock object's holds come from: its queues ({@link Handles}) or a semaphore's leases
 * ({@link Leases}, for the mutex on Curator's semaphore layout). It takes the attempts an owner
 * keeps ({@link #take}) and hands out holds owned by handles ({@link #hold}, {@link
 * #acquireAsync}).
 */
public interface HoldSource {
  /** What the source's acquisitions share. */
  LockSettings settings();

  /**
   * Waits for a hold owned by a handle.
   *
   * @param budget the caller's budget, from when it called; none to wait as long as it takes
   * @return the hold, or null if the budget ran out (nothing is left behind)
   */
  LockHold hold(Budget budget) throws InterruptedException;

  /**
   * A hold owned by a handle, asynchronously: no thread waits ({@link Waits} is the policy).
   *
   * @param budget the caller's budget, from when it called; or none
   * @param executor completes the stage, so runs its dependent stages
   */
  CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor);

  /**
   * Waits for a granted attempt that its caller owns and releases: the hold of a lock object.
   *
   * @return the attempt, or null if the budget ran out (nothing is left behind)
   */
  Attempt take(Budget budget) throws InterruptedException;

  /** As {@link #take} with no budget, ignoring interrupts (the flag is set again on return). */
  Attempt takeUninterruptibly();

  /** Whether a handle of this source holds the lock. */
  boolean any();

  /** No new attempt starts from now on; see {@link Ownership#close()}. Idempotent. */
  void close();
}
