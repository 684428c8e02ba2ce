package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.SlimMap;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import java.util.function.Function;

/**
 * Holds owned by threads, reentrant per thread: the hold table of {@link ReentrantMutex}, of each
 * side of a {@link ReadWriteMutex} and of {@link MultiMutex}. A reentrant acquire costs no request.
 */
public final class ThreadOwnership implements Ownership {
  private final AttemptFactory attempts;
  private final Function<Thread, List<Slot>> slots;
  private final Revocation revocation;
  private final Handles handles;
  private final SlimMap<Thread, Entry> holds = new SlimMap<>(); // nothing kept while idle

  /** A thread's hold. Only the owning thread reads or writes {@code count}. */
  private static final class Entry {
    final Attempt acquisition;
    int count = 1;

    Entry(Attempt acquisition) {
      this.acquisition = acquisition;
    }
  }

  /**
   * @param slots the queues a new hold of the given thread enqueues in; null when the thread may
   *     not wait for this lock (an upgrade of a read hold)
   * @param revocation whether acquisitions are revocable, or null if they never are
   * @param handles the lock object's holds owned by handles
   */
  public ThreadOwnership(
      AttemptFactory attempts,
      Function<Thread, List<Slot>> slots,
      Revocation revocation,
      Handles handles) {
    this.attempts = attempts;
    this.slots = slots;
    this.revocation = revocation;
    this.handles = handles;
  }

  /** Holds of a lock that always enqueues in the same queues. */
  public static ThreadOwnership of(AttemptFactory attempts, List<Slot> slots) {
    List<Slot> fixed = List.copyOf(slots);
    return new ThreadOwnership(
        attempts, thread -> fixed, null, new Handles(attempts, () -> fixed, null));
  }

  @Override
  public Handles handles() {
    return handles;
  }

  /**
   * Acquires for the current thread: again if it already holds (unless that hold was lost), else by
   * enqueuing.
   *
   * @throws IllegalMonitorStateException if an untimed acquire would wait for the thread's own hold
   *     (a timed one returns false at once)
   * @throws LockOwnershipLostException if the thread's hold (or the write hold a downgrade ties to)
   *     was lost
   */
  @Override
  public boolean acquire(Budget budget) throws InterruptedException {
    Thread thread = Thread.currentThread();
    if (reenter(thread)) {
      return true;
    }
    List<Slot> queues = queuesFor(thread, budget.timeoutNanos() < 0);
    if (queues == null) {
      return false;
    }
    Attempt acquisition = start(queues);
    if (!Waits.await(acquisition, budget)) {
      return false;
    }
    holds.put(thread, new Entry(acquisition));
    return true;
  }

  @Override
  public void acquireUninterruptibly() {
    Thread thread = Thread.currentThread();
    if (reenter(thread)) {
      return;
    }
    Attempt acquisition = start(queuesFor(thread, true));
    Waits.awaitUninterruptibly(acquisition);
    holds.put(thread, new Entry(acquisition));
  }

  /** Counts one more acquire of a hold the thread has, unless that hold was lost. */
  private boolean reenter(Thread thread) {
    Entry hold = holds.get(thread);
    if (hold == null) {
      return false;
    }
    hold.acquisition.checkNotLost();
    hold.count++;
    return true;
  }

  /** The queues to enqueue in; null (timed) or a throw (untimed) when the thread may not wait. */
  private List<Slot> queuesFor(Thread thread, boolean untimed) {
    List<Slot> queues = slots.apply(thread);
    if (queues == null && untimed) {
      throw new IllegalMonitorStateException(
          "Acquiring lock "
              + settings().description()
              + " would wait forever for a lock the current thread holds");
    }
    return queues;
  }

  private Attempt start(List<Slot> queues) {
    Runnable revocationHandler = revocation == null ? null : revocation.handler();
    return attempts.start(queues, revocationHandler);
  }

  /** Releases one hold count of the current thread; the last one deletes the node. */
  @Override
  public void release() {
    Thread thread = Thread.currentThread();
    Entry hold = holds.get(thread);
    if (hold == null) {
      throw notOwner();
    }
    if (--hold.count > 0) {
      return;
    }
    holds.remove(thread);
    hold.acquisition.release();
  }

  /** The given thread's hold, or null. */
  Attempt heldBy(Thread thread) {
    Entry hold = holds.get(thread);
    return hold == null ? null : hold.acquisition;
  }

  @Override
  public Attempt current() {
    Attempt acquisition = heldBy(Thread.currentThread());
    if (acquisition == null) {
      throw notOwner();
    }
    return acquisition;
  }

  @Override
  public int holdCount() {
    Entry hold = holds.get(Thread.currentThread());
    return hold == null ? 0 : hold.count;
  }

  @Override
  public boolean isAcquiredInThisProcess() {
    return !holds.isEmpty() || handles.any();
  }

  private IllegalMonitorStateException notOwner() {
    return new IllegalMonitorStateException(
        "You do not own the lock: "
            + settings().description()
            + " (thread "
            + Thread.currentThread().getName()
            + ")");
  }

  @Override
  public void close() {
    attempts.close();
  }
}
