package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.Budget;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * A Lockstep lock's turn in a composed {@link MultiMutex}: it waits within the composed budget
 * itself, so the locks whose turn comes after the deadline share that budget's one grace, and the
 * call ends within its budget and one grace however many locks it takes, as a single lock's would.
 * A composed lock inside the composed one takes its turns the same way. Another library's lock
 * (Curator's, say) has no such turn: it gets what is left of the budget.
 */
interface BudgetedTurn {
  /** The clock a composed budget counts on: the engine's. */
  LongSupplier clock();

  /** Acquires within {@code budget}; false if it ran out. */
  boolean acquire(Budget budget) throws InterruptedException;

  /** A hold within {@code budget}, or null if it ran out. */
  LockHold hold(Budget budget) throws InterruptedException;

  /** A hold within {@code budget}, asynchronously; completes on {@code executor}. */
  CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor);

  /** The turn of {@code lock}, or null if it is another library's. */
  static BudgetedTurn of(InterProcessLock lock) {
    InterProcessLock inner = lock instanceof MultiMutex multi ? multi.delegate() : lock;
    if (inner instanceof AbstractFencedLock single) {
      return single.turn();
    }
    return inner instanceof ComposedLock composed ? composed : null;
  }
}
