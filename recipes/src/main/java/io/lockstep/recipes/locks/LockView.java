package io.lockstep.recipes.locks;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A {@link FencedLock} seen as a {@link Lock}, for code written against {@code
 * java.util.concurrent}: {@link FencedLock#asLock()}. Holds are owned as the lock's own {@code
 * acquire()} owns them (by the thread for the reentrant recipes, by the lock object for {@link
 * NonReentrantMutex}), and the fencing token of the caller's hold stays within reach.
 *
 * <pre>{@code
 * Lock lock = mutex.asLock();
 * lock.lock();
 * try {
 *   store.write(order, ((LockView) lock).fencingToken());
 * } finally {
 *   lock.unlock();
 * }
 * }</pre>
 *
 * <p><b>Contract.</b> As {@link Lock}'s and {@code ReentrantLock}'s: {@link #lock()} waits without
 * giving in to interrupts (the interrupt flag is kept and set when it returns); {@link
 * #lockInterruptibly()} gives in, and throws at once if the flag is set on entry, even for a
 * reentrant acquire; {@link #tryLock()} makes one attempt (a create and one read of the queue) and
 * returns at once; {@link #tryLock(long, TimeUnit)} with a time of zero or less does the same, and
 * throws if the interrupt flag is set on entry; {@link #unlock()} by a caller that does not hold
 * the lock throws {@link IllegalMonitorStateException}; {@link #newCondition()} is not supported.
 *
 * <p><b>When ZooKeeper is unreachable.</b> Both {@code tryLock} forms keep their budget and return
 * {@code false} when they end because ZooKeeper could not be reached, as {@code Lock} allows and as
 * Spring's lock registries do: the caller learns "not acquired", and observers and metrics record
 * {@link AcquireOutcome#UNREACHABLE}. Call {@link FencedLock#acquire(long, TimeUnit)} on {@link
 * #fencedLock()} to get {@link LockUnreachableException} instead. {@link #lock()} and {@link
 * #lockInterruptibly()} have no budget: they throw {@link LockException} once the client's retry
 * policy gives up, as other ZooKeeper failures do.
 */
public final class LockView implements Lock {
  private final FencedLock lock;
  private final Runnable lockUninterruptibly;

  /**
   * @param lockUninterruptibly acquires for the caller, ignoring interrupts (and keeping the flag)
   */
  LockView(FencedLock lock, Runnable lockUninterruptibly) {
    this.lock = Objects.requireNonNull(lock, "lock");
    this.lockUninterruptibly = lockUninterruptibly;
  }

  /**
   * The lock this is a view of.
   *
   * @return the fenced lock
   */
  public FencedLock fencedLock() {
    return lock;
  }

  /**
   * The fencing token of the caller's hold; see {@link FencedLock#fencingToken()}.
   *
   * @return the fencing token
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws LockOwnershipLostException if the hold was lost
   */
  public long fencingToken() {
    return lock.fencingToken();
  }

  /** Acquires the lock, waiting as long as it takes; an interrupt does not stop the wait. */
  @Override
  public void lock() {
    lockUninterruptibly.run();
  }

  /**
   * Acquires the lock unless the thread is interrupted: an interrupt flag already set on entry
   * throws at once, also when the caller holds the lock already (as {@code ReentrantLock} does).
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    lock.acquire();
  }

  /**
   * Makes one attempt (a create and one read of the queue), returning at once after it; {@code
   * false} also when ZooKeeper cannot be reached.
   */
  @Override
  public boolean tryLock() {
    boolean interrupted = Thread.interrupted(); // an interrupt does not stop the one attempt
    try {
      return lock.acquire(0, TimeUnit.NANOSECONDS);
    } catch (LockUnreachableException e) {
      return false;
    } catch (InterruptedException e) {
      interrupted = true;
      return false;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Acquires the lock if it is granted within {@code time}; a time of zero or less makes one
   * attempt without waiting, as {@link #tryLock()} does. An interrupt flag already set on entry
   * throws at once, also when the caller holds the lock already (as {@code ReentrantLock} does).
   * Returns {@code false} within {@code time} also when ZooKeeper cannot be reached.
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit");
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    try {
      return lock.acquire(Math.max(0, time), unit);
    } catch (LockUnreachableException e) {
      return false;
    }
  }

  /**
   * Releases the caller's hold.
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   */
  @Override
  public void unlock() {
    lock.release();
  }

  /**
   * Not supported: a ZooKeeper lock has no conditions.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("A Lockstep lock has no conditions: " + lock);
  }

  @Override
  public String toString() {
    return "LockView[" + lock + "]";
  }
}
