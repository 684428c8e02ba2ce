package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.zk.Background;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * {@link MultiMutex}'s composed form: arbitrary locks taken one after another, as Curator's {@code
 * InterProcessMultiLock} does. Not deadlock-free.
 */
final class ComposedLock implements FencedLock, BudgetedTurn {
  private final List<InterProcessLock> locks;
  private final LockView view;
  private final LongSupplier clock; // for one total budget over the locks
  private volatile boolean closed; // no new hold: the composed locks are the caller's own

  ComposedLock(List<InterProcessLock> locks) {
    this.locks = List.copyOf(locks);
    this.clock = clockOf(this.locks);
    this.view = new LockView(this, this::acquireUninterruptibly);
  }

  @Override
  public void acquire() throws InterruptedException {
    var unused = acquire(Budget.of(-1, clock));
  }

  @Override
  public boolean acquire(long time, TimeUnit unit) throws InterruptedException {
    return acquire(Budget.of(Arguments.timeoutNanos(time, unit), clock));
  }

  /**
   * In order, within one total budget (this call's, or an outer composed lock's); on failure
   * releases what it took, in reverse.
   */
  @Override
  public boolean acquire(Budget budget) throws InterruptedException {
    checkOpen();
    List<InterProcessLock> acquired = new ArrayList<>();
    try {
      for (InterProcessLock lock : locks) {
        checkOpen(); // closed meanwhile: what was taken goes back
        if (!budget.bounded()) {
          lock.acquire();
        } else if (!acquireWithin(lock, budget)) {
          releaseAll(acquired, null);
          return false;
        }
        acquired.add(lock);
      }
      return true;
    } catch (InterruptedException | RuntimeException e) {
      releaseAll(acquired, e);
      throw e;
    } catch (Exception e) {
      LockException failure = new LockException("Could not acquire " + this + ": " + e, e);
      releaseAll(acquired, failure);
      throw failure;
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Releases every lock in reverse order, even when some fail; the first failure is thrown with
   * the others added as suppressed exceptions.
   */
  @Override
  public void release() {
    RuntimeException failure = releaseAll(locks, null);
    if (failure != null) {
      throw failure;
    }
  }

  /** Releases in reverse order; returns the first failure (or adds them all to {@code primary}). */
  private static RuntimeException releaseAll(List<InterProcessLock> held, Exception primary) {
    RuntimeException first = null;
    for (int i = held.size() - 1; i >= 0; i--) {
      try {
        held.get(i).release();
      } catch (Exception e) {
        if (primary != null) {
          primary.addSuppressed(e);
        } else if (first == null) {
          first =
              e instanceof RuntimeException
                  ? (RuntimeException) e
                  : new LockException("Could not release " + held.get(i) + ": " + e, e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    return first;
  }

  @Override
  public boolean isAcquiredInThisProcess() {
    for (InterProcessLock lock : locks) {
      if (!lock.isAcquiredInThisProcess()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Not available: composed locks have one token each.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public long fencingToken() {
    throw new UnsupportedOperationException(
        "A MultiMutex composed of locks has no single fencing token; read each lock's own");
  }

  @Override
  public void checkHeld() {
    for (InterProcessLock lock : locks) {
      if (lock instanceof FencedLock) {
        ((FencedLock) lock).checkHeld();
      } else if (!lock.isAcquiredInThisProcess()) {
        throw new IllegalMonitorStateException("Not held: " + lock);
      }
    }
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    List<CuratorOp> checks = new ArrayList<>();
    for (FencedLock lock : fencedLocks("ownership checks")) {
      checks.addAll(lock.ownershipChecks());
    }
    return List.copyOf(checks);
  }

  @Override
  public Listenable<LockStateListener> getStateListenable() {
    List<FencedLock> fenced = fencedLocks("state listeners");
    return new Listenable<>() {
      @Override
      public void addListener(LockStateListener listener) {
        fenced.forEach(lock -> lock.getStateListenable().addListener(listener));
      }

      @Override
      public void addListener(LockStateListener listener, Executor executor) {
        fenced.forEach(lock -> lock.getStateListenable().addListener(listener, executor));
      }

      @Override
      public void removeListener(LockStateListener listener) {
        fenced.forEach(lock -> lock.getStateListenable().removeListener(listener));
      }
    };
  }

  @Override
  public Collection<String> getParticipantNodes() {
    List<String> nodes = new ArrayList<>();
    for (InterProcessLock lock : locks) {
      if (lock instanceof FencedLock) {
        nodes.addAll(((FencedLock) lock).getParticipantNodes());
      } else if (lock instanceof InterProcessMutex) {
        try {
          nodes.addAll(((InterProcessMutex) lock).getParticipantNodes());
        } catch (Exception e) {
          throw new LockException("Could not read the participants of " + lock, e);
        }
      }
    }
    return List.copyOf(nodes);
  }

  /**
   * {@inheritDoc}
   *
   * <p>For the composed form: each lock's hold in list order, within one total budget; available
   * when every lock is a {@link FencedLock}. The hold has no single fencing token.
   */
  @Override
  public CompletionStage<LockHold> acquireAsync() {
    return acquireAsync(Duration.ofNanos(Long.MAX_VALUE), Background.INSTANCE::execute);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout) {
    return acquireAsync(timeout, Background.INSTANCE::execute);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout, Executor executor) {
    long timeoutNanos = Arguments.timeoutNanos(timeout, "timeout");
    return acquireAsync(
        Budget.of(timeoutNanos, clock), Objects.requireNonNull(executor, "executor"));
  }

  /** The locks' holds one after another, within {@code budget} (this call's or an outer one's). */
  @Override
  public CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor) {
    checkOpen();
    List<FencedLock> fenced = fencedLocks("holds");
    CompletableFuture<LockHold> result = new CompletableFuture<>();
    ComposedChain chain = new ComposedChain(fenced, budget, executor, result);
    var unused =
        result.whenComplete(
            (hold, failure) -> {
              if (result.isCancelled()) {
                chain.cancel();
              }
            });
    chain.next();
    return result;
  }

  @Override
  public LockHold hold() throws InterruptedException {
    return hold(Budget.of(-1, clock));
  }

  @Override
  public Optional<LockHold> tryHold(Duration timeout) throws InterruptedException {
    return Optional.ofNullable(hold(Budget.of(Arguments.timeoutNanos(timeout, "timeout"), clock)));
  }

  /**
   * In list order, within one total budget (this call's or an outer composed lock's); on failure or
   * timeout closes what it took.
   */
  @Override
  public LockHold hold(Budget budget) throws InterruptedException {
    checkOpen();
    List<FencedLock> fenced = fencedLocks("holds");
    List<LockHold> taken = new ArrayList<>();
    try {
      for (FencedLock lock : fenced) {
        if (!budget.bounded()) {
          taken.add(lock.hold());
          continue;
        }
        LockHold hold = holdWithin(lock, budget);
        if (hold == null) {
          ComposedHandle.closeAll(taken);
          return null;
        }
        taken.add(hold);
      }
      return new ComposedHandle(taken);
    } catch (InterruptedException | RuntimeException e) {
      try {
        ComposedHandle.closeAll(taken);
      } catch (RuntimeException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  @Override
  public LongSupplier clock() {
    return clock;
  }

  /**
   * The clock of a composed lock's budget: that of the first Lockstep lock among {@code locks},
   * else the system's (the locks are all someone else's, Curator's say).
   */
  private static LongSupplier clockOf(List<InterProcessLock> locks) {
    for (InterProcessLock lock : locks) {
      BudgetedTurn turn = BudgetedTurn.of(lock);
      if (turn != null) {
        return turn.clock();
      }
    }
    return System::nanoTime;
  }

  /** One lock's turn within the composed budget ({@link BudgetedTurn}), or what is left of it. */
  private static boolean acquireWithin(InterProcessLock lock, Budget budget) throws Exception {
    BudgetedTurn turn = BudgetedTurn.of(lock);
    return turn != null
        ? turn.acquire(budget)
        : lock.acquire(budget.remainingNanos(), TimeUnit.NANOSECONDS);
  }

  private static LockHold holdWithin(FencedLock lock, Budget budget) throws InterruptedException {
    BudgetedTurn turn = BudgetedTurn.of(lock);
    return turn != null
        ? turn.hold(budget)
        : lock.tryHold(Duration.ofNanos(budget.remainingNanos())).orElse(null);
  }

  @Override
  public LockView asLock() {
    return view;
  }

  /** No new hold from now on; the locks it composes are left open (they are the caller's). */
  void close() {
    closed = true;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("Lock object " + this + " is closed");
    }
  }

  /** The composed form's lock(): an interrupt restarts the whole sequence, then keeps the flag. */
  private void acquireUninterruptibly() {
    boolean interrupted = false;
    while (true) {
      try {
        acquire();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private List<FencedLock> fencedLocks(String what) {
    List<FencedLock> fenced = new ArrayList<>();
    for (InterProcessLock lock : locks) {
      if (!(lock instanceof FencedLock)) {
        throw new UnsupportedOperationException(
            "A MultiMutex composed of locks offers "
                + what
                + " only when every lock is a FencedLock: "
                + lock);
      }
      fenced.add((FencedLock) lock);
    }
    return fenced;
  }

  @Override
  public String toString() {
    return "MultiMutex" + locks;
  }
}
