package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.CallerContext;
import io.lockstep.recipes.internal.owner.Waits;
import io.lockstep.recipes.internal.zk.Retries;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;

/**
 * Takes one lock's hold after another, asynchronously, each started from the previous one's grant:
 * a cancel reaches the one pending (also one that started as the cancel came), and a lock that
 * cannot start fails the whole, giving back the holds taken.
 */
final class ComposedChain {
  private final List<FencedLock> locks;
  private final Budget budget;
  private final Executor executor;
  private final CompletableFuture<LockHold> result;
  private final List<LockHold> taken = new CopyOnWriteArrayList<>();
  private volatile CompletableFuture<LockHold> pending;
  private final CallerContext caller = CallerContext.capture(); // made in the caller's thread

  ComposedChain(
      List<FencedLock> locks,
      Budget budget,
      Executor executor,
      CompletableFuture<LockHold> result) {
    this.locks = locks;
    this.budget = budget;
    this.executor = executor;
    this.result = result;
  }

  void next() {
    if (result.isDone()) {
      ComposedHandle.closeAll(taken); // cancelled meanwhile
      return;
    }
    if (taken.size() == locks.size()) {
      Waits.offer(result, new ComposedHandle(taken), LockHold::close);
      return;
    }
    CompletableFuture<LockHold> stage;
    try {
      stage = start(locks.get(taken.size()));
    } catch (RuntimeException e) { // the lock cannot start (closed): no stage will tell
      ComposedHandle.closeAll(taken);
      result.completeExceptionally(e);
      return;
    }
    pending = stage;
    if (result.isDone()) {
      stage.cancel(true); // cancelled before pending named this stage: the cancel missed it
    }
    var unused =
        stage.whenComplete(
            (hold, failure) -> {
              if (failure != null) {
                ComposedHandle.closeAll(taken);
                result.completeExceptionally(Retries.unwrap(failure));
              } else {
                taken.add(hold);
                next();
              }
            });
  }

  /**
   * Starts {@code lock}'s attempt carrying what the caller's thread had current: observers hear
   * every lock's start as if in that thread, though all but the first start on another.
   */
  private CompletableFuture<LockHold> start(FencedLock lock) {
    BudgetedTurn turn = BudgetedTurn.of(lock);
    long left = budget.bounded() ? budget.remainingNanos() : Long.MAX_VALUE;
    return caller.carry(
        () ->
            (turn != null
                    ? turn.acquireAsync(budget, executor)
                    : lock.acquireAsync(Duration.ofNanos(left), executor))
                .toCompletableFuture());
  }

  void cancel() {
    CompletableFuture<LockHold> stage = pending;
    if (stage != null) {
      stage.cancel(true);
    }
  }
}
