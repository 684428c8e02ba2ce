package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One hold per lock object, owned by the object rather than a thread: the hold of {@link
 * NonReentrantMutex} (from its queue) and of {@link SemaphoreMutex} (a lease of Curator's semaphore
 * layout). Any thread may release it. Threads of this process that share the object queue for a
 * local permit first, so the object never holds two leases (a thread whose hold was lost cannot
 * release a newer one by mistake).
 */
public final class ObjectOwnership implements Ownership {
  private final HoldSource source;
  private final Semaphore permit = new Semaphore(1, true);
  private final AtomicReference<Owned> held = new AtomicReference<>();

  private record Owned(Attempt acquisition, Thread acquirer) {}

  /** The object's hold and its handles come from {@code source}. */
  public ObjectOwnership(HoldSource source) {
    this.source = source;
  }

  /** The object's hold and its handles queue in {@code slots}. */
  public static ObjectOwnership ofQueues(AttemptFactory attempts, List<Slot> slots) {
    List<Slot> fixed = List.copyOf(slots);
    return new ObjectOwnership(new Handles(attempts, () -> fixed, null));
  }

  @Override
  public HoldSource handles() {
    return source;
  }

  /**
   * Acquires for this object. An untimed acquire by the thread that holds it would wait for itself
   * forever, so it fails fast instead.
   */
  @Override
  public boolean acquire(Budget budget) throws InterruptedException {
    boolean untimed = budget.timeoutNanos() < 0;
    if (untimed) {
      checkNotOwnHold();
      permit.acquire();
    } else if (!permit.tryAcquire(budget.remainingNanos(), TimeUnit.NANOSECONDS)) {
      return false;
    }
    Attempt acquisition = null;
    try {
      acquisition = source.take(budget);
      return acquisition != null;
    } finally {
      keepOrGiveBack(acquisition);
    }
  }

  @Override
  public void acquireUninterruptibly() {
    checkNotOwnHold();
    permit.acquireUninterruptibly();
    Attempt acquisition = null;
    try {
      acquisition = source.takeUninterruptibly();
    } finally {
      keepOrGiveBack(acquisition);
    }
  }

  private void checkNotOwnHold() {
    Owned hold = held.get();
    if (hold != null && hold.acquirer() == Thread.currentThread()) {
      throw new IllegalMonitorStateException(
          "The current thread already holds the non-reentrant lock "
              + settings().description()
              + "; acquiring it again would wait forever");
    }
  }

  /** Keeps a granted attempt as the object's hold; without one, gives the permit back. */
  private void keepOrGiveBack(Attempt granted) {
    if (granted == null) {
      permit.release();
    } else {
      held.set(new Owned(granted, Thread.currentThread()));
    }
  }

  /** Releases the hold, whichever thread calls. */
  @Override
  public void release() {
    Owned hold = held.getAndSet(null);
    if (hold == null) {
      throw new IllegalMonitorStateException("The lock is not held: " + settings().description());
    }
    try {
      hold.acquisition().release();
    } finally {
      permit.release();
    }
  }

  @Override
  public Attempt current() {
    Owned hold = held.get();
    if (hold == null) {
      throw new IllegalMonitorStateException("The lock is not held: " + settings().description());
    }
    return hold.acquisition();
  }

  /** 1 while the object holds the lock, whichever thread asks: the object owns the hold. */
  @Override
  public int holdCount() {
    return held.get() == null ? 0 : 1;
  }

  @Override
  public boolean isAcquiredInThisProcess() {
    return held.get() != null || source.any();
  }

  @Override
  public void close() {
    source.close();
  }
}
