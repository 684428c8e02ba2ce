package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.Ownership;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * The facade of the locks whose one hold is owned by the lock object, not by a thread ({@link
 * NonReentrantMutex} on the mutex queue, {@link SemaphoreMutex} on Curator's semaphore nodes): an
 * untimed acquire by the holding thread fails fast, any thread releases, and the check is of the
 * object's node. Javadoc documents its public methods as each lock's own.
 */
abstract class ObjectOwnedLock extends AbstractFencedLock implements AutoCloseable {
  ObjectOwnedLock(Ownership holds, QueueView queues) {
    super(holds, queues);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalMonitorStateException if the current thread already holds this lock
   */
  @Override
  public void acquire() throws InterruptedException {
    super.acquire();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Any thread may release.
   *
   * @throws IllegalMonitorStateException if the lock is not held
   */
  @Override
  public void release() {
    super.release();
  }

  /**
   * A check operation on this object's node (its lease node, for a {@link SemaphoreMutex}), for the
   * caller's own transaction: it commits only while the node, and so the lock, exists.
   *
   * @return the check operation
   * @throws IllegalMonitorStateException if the lock is not held
   * @throws LockOwnershipLostException if the hold was lost
   */
  public CuratorOp ownershipCheck() {
    return ownershipChecks().get(0);
  }
}
