package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.Ownership;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * The facade of the locks whose holds are owned by threads and reentrant, each with one node per
 * hold ({@link ReentrantMutex} and both sides of a {@link ReadWriteMutex}, as {@code ReentrantLock}
 * and {@code ReentrantReadWriteLock}'s views answer the same questions): whether the current thread
 * holds, how often, and a check of its node. Javadoc documents its public methods as each lock's
 * own.
 */
abstract class ThreadOwnedLock extends AbstractFencedLock {
  ThreadOwnedLock(Ownership holds, QueueView queues) {
    super(holds, queues);
  }

  /**
   * A check operation on the current thread's node of this lock (its read node for a read lock, its
   * write node for a write lock), for the caller's own transaction: it commits only while the node,
   * and so the lock, exists.
   *
   * @return the check operation
   * @throws IllegalMonitorStateException if the current thread does not hold this lock
   * @throws LockOwnershipLostException if the hold was lost
   */
  public CuratorOp ownershipCheck() {
    return ownershipChecks().get(0);
  }

  /**
   * Whether the current thread holds this lock.
   *
   * @return true if the current thread holds it
   */
  public boolean isOwnedByCurrentThread() {
    return holds.holdCount() > 0;
  }

  /**
   * How many times the current thread holds this lock: acquires minus releases.
   *
   * @return the hold count, 0 if the current thread does not hold this lock
   */
  public int getHoldCount() {
    return holds.holdCount();
  }
}
