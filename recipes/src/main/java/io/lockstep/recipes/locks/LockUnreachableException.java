package io.lockstep.recipes.locks;

/**
 * Thrown when an acquire ended because ZooKeeper could not be reached: a timed acquire whose budget
 * ran out while the client had no connection (not yet connected, suspended, read-only or lost), or
 * any acquire whose requests failed with a lost connection until the client's retry policy gave up.
 *
 * <p>It tells "ZooKeeper is down or cut off" apart from "another holder has the lock" (a timed
 * acquire that returns {@code false}): a service can fail fast, answer "unavailable" and count an
 * outage rather than contention. The caller does not hold the lock. A node whose create was still
 * in flight is deleted by background work once the client reconnects; none is left behind.
 *
 * <p>The message names the lock path and the budget or the failure; the cause, when there is one,
 * is ZooKeeper's {@link org.apache.zookeeper.KeeperException.ConnectionLossException} (or {@code
 * OperationTimeoutException}, {@code SessionExpiredException}). It is a {@link LockException}, so
 * code that handles ZooKeeper failures already handles it. {@link LockView} and the Spring lock
 * registry keep {@link java.util.concurrent.locks.Lock}'s contract instead: their {@code tryLock}
 * returns {@code false}.
 */
public class LockUnreachableException extends LockException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what could not be done, naming the lock path
   * @param cause ZooKeeper's failure, or null when the budget ran out without a connection
   */
  public LockUnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}
