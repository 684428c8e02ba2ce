package io.lockstep.recipes.locks;

import io.lockstep.recipes.locks.internal.Arguments;
import io.lockstep.recipes.locks.internal.LockContext;
import io.lockstep.recipes.locks.internal.Slot;
import io.lockstep.recipes.locks.internal.ThreadBoundLock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;

/**
 * The shared shape of the thread-owned, reentrant recipes: a subclass says which queues an acquire
 * enqueues in; holds, reentrancy, fencing and loss are the engine's.
 */
abstract class ThreadBoundFencedLock implements FencedLock {
  final ThreadBoundLock lock;

  ThreadBoundFencedLock(CuratorFramework client, String description) {
    this.lock = new ThreadBoundLock(new LockContext(client, description));
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
   * {@inheritDoc}
   *
   * @throws IllegalMonitorStateException if the current thread does not hold the lock
   */
  @Override
  public void release() {
    lock.release();
  }

  /**
   * Whether any thread of this process holds the lock through this object.
   *
   * @return true if held in this process
   */
  @Override
  public boolean isAcquiredInThisProcess() {
    return lock.isAcquiredInThisProcess();
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

  @Override
  public long fencingToken() {
    return lock.requireCurrent().checkedFencingToken();
  }

  @Override
  public void checkHeld() {
    lock.requireCurrent().checkNotLost();
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    return lock.requireCurrent().ownershipChecks();
  }

  @Override
  public Listenable<LockStateListener> getStateListenable() {
    return lock.context().listeners();
  }

  /** The current thread's node in the (first) queue, or null if it holds nothing. */
  String currentNodePath() {
    var acquisition = lock.current();
    return acquisition == null ? null : acquisition.nodePaths().get(0);
  }
}
