package io.lockstep.recipes.locks.internal;

import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One hold per lock object, owned by the object rather than a thread: the core of {@code
 * NonReentrantMutex}. Any thread may release it. Threads of this process that share the object
 * queue for a local permit first, so the object never holds two leases (a thread whose hold was
 * lost cannot release a newer one by mistake).
 */
public final class InstanceBoundLock implements Holds {
  private final LockContext context;
  private final Semaphore permit = new Semaphore(1, true);
  private final AtomicReference<Hold> held = new AtomicReference<>();

  private record Hold(Acquisition acquisition, Thread acquirer) {}

  public InstanceBoundLock(LockContext context) {
    this.context = context;
  }

  @Override
  public LockContext context() {
    return context;
  }

  /**
   * Acquires for this object. An untimed acquire by the thread that holds it would wait for itself
   * forever, so it fails fast instead.
   *
   * @param timeoutNanos the budget, negative for no limit
   * @return false if the budget ran out
   */
  public boolean acquire(long timeoutNanos, List<Slot> slots) throws InterruptedException {
    Hold hold = held.get();
    if (timeoutNanos < 0 && hold != null && hold.acquirer() == Thread.currentThread()) {
      throw new IllegalMonitorStateException(
          "The current thread already holds the non-reentrant lock "
              + context.description()
              + "; acquiring it again would wait forever");
    }
    long start = System.nanoTime();
    if (timeoutNanos < 0) {
      permit.acquire();
    } else if (!permit.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
      return false;
    }
    boolean acquired = false;
    try {
      long remaining =
          timeoutNanos < 0 ? -1 : Math.max(0, timeoutNanos - (System.nanoTime() - start));
      Acquisition acquisition = Acquisition.start(context, slots, null);
      acquired = acquisition.await(remaining);
      if (acquired) {
        held.set(new Hold(acquisition, Thread.currentThread()));
      }
      return acquired;
    } finally {
      if (!acquired) {
        permit.release();
      }
    }
  }

  /** Releases the hold, whichever thread calls. */
  @Override
  public void release() {
    Hold hold = held.getAndSet(null);
    if (hold == null) {
      throw new IllegalMonitorStateException("The lock is not held: " + context.description());
    }
    try {
      hold.acquisition().release();
    } finally {
      permit.release();
    }
  }

  /** The hold, or an {@link IllegalMonitorStateException} naming the lock. */
  @Override
  public Acquisition requireCurrent() {
    Hold hold = held.get();
    if (hold == null) {
      throw new IllegalMonitorStateException("The lock is not held: " + context.description());
    }
    return hold.acquisition();
  }

  @Override
  public boolean isAcquiredInThisProcess() {
    return held.get() != null;
  }
}
