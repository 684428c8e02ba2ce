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
 * NonReentrantMutex}. Any thread may release it. Threads of this process that share the object
 * queue for a local permit first, so the object never holds two leases (a thread whose hold was
 * lost cannot release a newer one by mistake).
 */
public final class ObjectOwnership implements Ownership {
  private final AttemptFactory attempts;
  private final List<Slot> slots;
  private final Handles handles;
  private final Semaphore permit = new Semaphore(1, true);
  private final AtomicReference<Owned> held = new AtomicReference<>();

  private record Owned(Attempt acquisition, Thread acquirer) {}

  public ObjectOwnership(AttemptFactory attempts, List<Slot> slots) {
    this.attempts = attempts;
    this.slots = List.copyOf(slots);
    this.handles = new Handles(attempts, () -> this.slots, null);
  }

  @Override
  public Handles handles() {
    return handles;
  }

  /**
   * Acquires for this object. An untimed acquire by the thread that holds it would wait for itself
   * forever, so it fails fast instead.
   */
  @Override
  public boolean acquire(long timeoutNanos) throws InterruptedException {
    Owned hold = held.get();
    if (timeoutNanos < 0 && hold != null && hold.acquirer() == Thread.currentThread()) {
      throw new IllegalMonitorStateException(
          "The current thread already holds the non-reentrant lock "
              + settings().description()
              + "; acquiring it again would wait forever");
    }
    Budget budget = Budget.of(timeoutNanos, settings());
    if (timeoutNanos < 0) {
      permit.acquire();
    } else if (!permit.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
      return false;
    }
    boolean acquired = false;
    try {
      Attempt acquisition = attempts.start(slots, null);
      acquired = Waits.await(acquisition, budget);
      if (acquired) {
        held.set(new Owned(acquisition, Thread.currentThread()));
      }
      return acquired;
    } finally {
      if (!acquired) {
        permit.release();
      }
    }
  }

  @Override
  public void acquireUninterruptibly() {
    Owned hold = held.get();
    if (hold != null && hold.acquirer() == Thread.currentThread()) {
      throw new IllegalMonitorStateException(
          "The current thread already holds the non-reentrant lock "
              + settings().description()
              + "; acquiring it again would wait forever");
    }
    permit.acquireUninterruptibly();
    boolean acquired = false;
    try {
      Attempt acquisition = attempts.start(slots, null);
      Waits.awaitUninterruptibly(acquisition);
      held.set(new Owned(acquisition, Thread.currentThread()));
      acquired = true;
    } finally {
      if (!acquired) {
        permit.release();
      }
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
    return held.get() != null || handles.any();
  }

  @Override
  public void close() {
    attempts.close();
  }
}
