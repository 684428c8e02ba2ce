package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.internal.owner.OwnershipAccess;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.LongSupplier;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;

/**
 * The one facade layer of the single-engine recipes: every public method is one line over the lock
 * object's {@link Ownership}, as {@code ReentrantLock}'s are over its {@code Sync}. What differs
 * from recipe to recipe (who owns a hold, which queues, revocation, the downgrade rule) is given to
 * the holds at construction, and so are the queues it stands in (its {@link QueueView}), which
 * {@link #getParticipantNodes()} reads and {@link #toString()} names.
 */
abstract class AbstractFencedLock implements FencedLock {
  static {
    OwnershipAccess.install(
        lock -> {
          FencedLock engine = lock instanceof MultiMutex multi ? multi.delegate() : lock;
          if (!(engine instanceof AbstractFencedLock)) {
            throw new IllegalArgumentException("not a single-engine Lockstep lock: " + lock);
          }
          return ((AbstractFencedLock) engine).holds;
        });
  }

  final Ownership holds;
  private final QueueView queues;
  private static final AtomicReferenceFieldUpdater<AbstractFencedLock, LockView> VIEW =
      AtomicReferenceFieldUpdater.newUpdater(AbstractFencedLock.class, LockView.class, "view");

  // made at the first asLock() (a lock object per key needs none), the same one for good
  private volatile LockView view;

  AbstractFencedLock(Ownership holds, QueueView queues) {
    this.holds = holds;
    this.queues = queues;
  }

  @Override
  public void acquire() throws InterruptedException {
    holds.acquire(budget(-1));
  }

  @Override
  public boolean acquire(long time, TimeUnit unit) throws InterruptedException {
    return holds.acquire(budget(Arguments.timeoutNanos(time, unit)));
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   */
  @Override
  public void release() {
    holds.release();
  }

  /**
   * Whether this lock object holds the lock in this process.
   *
   * @return true if held in this process
   */
  @Override
  public boolean isAcquiredInThisProcess() {
    return holds.isAcquiredInThisProcess();
  }

  @Override
  public long fencingToken() {
    return holds.current().checkedFencingToken();
  }

  @Override
  public void checkHeld() {
    holds.current().checkNotLost();
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    return holds.current().ownershipChecks();
  }

  @Override
  public Listenable<LockStateListener> getStateListenable() {
    return holds.settings().listeners();
  }

  @Override
  public CompletionStage<LockHold> acquireAsync() {
    return holds.handles().acquireAsync(budget(-1), holds.settings().scheduler()::execute);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout) {
    return acquireAsync(timeout, holds.settings().scheduler()::execute);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout, Executor executor) {
    Budget budget = budget(Arguments.timeoutNanos(timeout, "timeout"));
    return holds.handles().acquireAsync(budget, Objects.requireNonNull(executor, "executor"));
  }

  @Override
  public LockHold hold() throws InterruptedException {
    return holds.handles().hold(budget(-1));
  }

  @Override
  public Optional<LockHold> tryHold(Duration timeout) throws InterruptedException {
    return Optional.ofNullable(
        holds.handles().hold(budget(Arguments.timeoutNanos(timeout, "timeout"))));
  }

  /** This lock's turn in a composed lock: within the composed budget, sharing its grace. */
  BudgetedTurn turn() {
    return new BudgetedTurn() {
      @Override
      public LongSupplier clock() {
        return holds.settings()::now;
      }

      @Override
      public boolean acquire(Budget budget) throws InterruptedException {
        return holds.acquire(budget);
      }

      @Override
      public LockHold hold(Budget budget) throws InterruptedException {
        return holds.handles().hold(budget);
      }

      @Override
      public CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor) {
        return holds.handles().acquireAsync(budget, executor);
      }
    };
  }

  /** A budget from now, on the engine's clock: the time the call takes to start counts too. */
  private Budget budget(long timeoutNanos) {
    return Budget.of(timeoutNanos, holds.settings());
  }

  @Override
  public LockView asLock() {
    LockView made = view;
    if (made == null) {
      VIEW.compareAndSet(this, null, new LockView(this, holds::acquireUninterruptibly));
      made = view;
    }
    return made;
  }

  /**
   * {@inheritDoc}
   *
   * <p>A read lock's are the read nodes of its queue, a write lock's the write nodes.
   */
  @Override
  public Collection<String> getParticipantNodes() {
    return queues.participants(holds.settings().client());
  }

  @Override
  public String toString() {
    return queues.toString();
  }
}
