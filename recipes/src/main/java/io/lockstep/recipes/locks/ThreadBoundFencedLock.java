package io.lockstep.recipes.locks;

import io.lockstep.recipes.locks.internal.Arguments;
import io.lockstep.recipes.locks.internal.LockContext;
import io.lockstep.recipes.locks.internal.Slot;
import io.lockstep.recipes.locks.internal.ThreadBoundLock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * The shared shape of the thread-owned, reentrant recipes: a subclass says which queues an acquire
 * enqueues in; holds, reentrancy, fencing and loss are the engine's.
 */
abstract class ThreadBoundFencedLock extends AbstractFencedLock {
  final ThreadBoundLock lock;

  ThreadBoundFencedLock(CuratorFramework client, String description) {
    this(new ThreadBoundLock(new LockContext(client, description)));
  }

  private ThreadBoundFencedLock(ThreadBoundLock lock) {
    super(lock);
    this.lock = lock;
  }

  /** The queues a new hold of the current thread enqueues in. */
  abstract List<Slot> slots();

  /** Run when a revocation is requested while held; null when not revocable. */
  Runnable revocationHandler() {
    return null;
  }

  /**
   * Whether the current thread may wait for this lock; false refuses a timed acquire at once, and
   * an untimed one throws {@link IllegalMonitorStateException}. Always true unless a subclass
   * refuses.
   */
  boolean mayWait() {
    return true;
  }

  @Override
  public void acquire() throws InterruptedException {
    if (lock.holdCount() == 0 && !mayWait()) {
      throw new IllegalMonitorStateException(
          "Acquiring " + this + " would wait forever for a lock the current thread holds");
    }
    lock.acquire(-1, this::slots, revocationHandler());
  }

  @Override
  public boolean acquire(long time, TimeUnit unit) throws InterruptedException {
    long timeoutNanos = Arguments.timeoutNanos(time, unit);
    if (lock.holdCount() == 0 && !mayWait()) {
      return false;
    }
    return lock.acquire(timeoutNanos, this::slots, revocationHandler());
  }

  /**
   * Whether the current thread holds the lock.
   *
   * @return true if the current thread holds it
   */
  public boolean isOwnedByCurrentThread() {
    return lock.holdCount() > 0;
  }

  /**
   * How many times the current thread holds the lock: acquires minus releases.
   *
   * @return the hold count, 0 if the current thread does not hold the lock
   */
  public int getHoldCount() {
    return lock.holdCount();
  }

  /** The current thread's node in the (first) queue, or null if it holds nothing. */
  String currentNodePath() {
    var acquisition = lock.current();
    return acquisition == null ? null : acquisition.nodePaths().get(0);
  }
}
