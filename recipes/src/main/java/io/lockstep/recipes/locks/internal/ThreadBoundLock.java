package io.lockstep.recipes.locks.internal;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;

/**
 * Holds owned by threads, reentrant per thread: the core of {@code ReentrantMutex}, the read and
 * write locks and {@code MultiMutex}. A reentrant acquire costs no request.
 */
public final class ThreadBoundLock implements Holds {
  private final LockContext context;
  private final ConcurrentMap<Thread, Hold> holds = new ConcurrentHashMap<>();

  /** A thread's hold. Only the owning thread reads or writes {@code count}. */
  private static final class Hold {
    final Acquisition acquisition;
    int count = 1;

    Hold(Acquisition acquisition) {
      this.acquisition = acquisition;
    }
  }

  public ThreadBoundLock(LockContext context) {
    this.context = context;
  }

  @Override
  public LockContext context() {
    return context;
  }

  /**
   * Acquires for the current thread: again if it already holds (unless that hold was lost), else by
   * enqueuing in the queues {@code slots} names.
   *
   * @param timeoutNanos the budget, negative for no limit
   * @param revocationHandler run on a revocation request while held, or null
   * @return false if the budget ran out
   */
  public boolean acquire(long timeoutNanos, Supplier<List<Slot>> slots, Runnable revocationHandler)
      throws InterruptedException {
    Thread thread = Thread.currentThread();
    Hold hold = holds.get(thread);
    if (hold != null) {
      hold.acquisition.checkNotLost();
      hold.count++;
      return true;
    }
    Acquisition acquisition = Acquisition.start(context, slots.get(), revocationHandler);
    if (!acquisition.await(timeoutNanos)) {
      return false;
    }
    holds.put(thread, new Hold(acquisition));
    return true;
  }

  /** Releases one hold count of the current thread; the last one deletes the node. */
  @Override
  public void release() {
    Thread thread = Thread.currentThread();
    Hold hold = holds.get(thread);
    if (hold == null) {
      throw notOwner();
    }
    if (--hold.count > 0) {
      return;
    }
    holds.remove(thread);
    hold.acquisition.release();
  }

  /** The current thread's hold, or null. */
  public Acquisition current() {
    Hold hold = holds.get(Thread.currentThread());
    return hold == null ? null : hold.acquisition;
  }

  /** The current thread's hold, or an {@link IllegalMonitorStateException} naming the lock. */
  @Override
  public Acquisition requireCurrent() {
    Acquisition acquisition = current();
    if (acquisition == null) {
      throw notOwner();
    }
    return acquisition;
  }

  /** How many times the current thread holds the lock, 0 if not at all. */
  public int holdCount() {
    Hold hold = holds.get(Thread.currentThread());
    return hold == null ? 0 : hold.count;
  }

  @Override
  public boolean isAcquiredInThisProcess() {
    return !holds.isEmpty();
  }

  private IllegalMonitorStateException notOwner() {
    return new IllegalMonitorStateException(
        "You do not own the lock: "
            + context.description()
            + " (thread "
            + Thread.currentThread().getName()
            + ")");
  }
}
