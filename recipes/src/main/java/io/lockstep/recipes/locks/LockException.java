package io.lockstep.recipes.locks;

/**
 * A ZooKeeper failure while acquiring, checking or reading a lock: the connection could not be
 * re-established within the client's retry policy, the session expired while waiting and no further
 * attempt was allowed, access was denied, or the client was closed.
 *
 * <p>The message names the lock path; the cause, when there is one, is the {@link
 * org.apache.zookeeper.KeeperException} that ZooKeeper reported. When an acquire throws this
 * exception, the caller does not hold the lock and no node of the attempt is left behind.
 *
 * <p>One subclass is no ZooKeeper failure: {@link
 * io.lockstep.recipes.fence.StaleFencingTokenException}, a guarded resource's refusal of a stale
 * holder's fencing token.
 */
public class LockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, naming the lock path
   * @param cause the ZooKeeper failure, or null
   */
  public LockException(String message, Throwable cause) {
    super(message, cause);
  }
}
