package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.LockException;

/**
 * Thrown by a {@link Locked} call whose {@link Locked#waitFor()} ran out before the lock was
 * granted: another holder had it (or, rarely, the server did not answer the attempt's first try
 * within the grace every budget gets: slow, not unreachable). The method was not called and no node
 * of the attempt is left behind. The message names the method, the key and the lock path.
 *
 * <p>It is a {@link LockException}, so code that handles lock failures handles it; an acquire that
 * ends because ZooKeeper could not be reached throws {@link
 * io.lockstep.recipes.locks.LockUnreachableException} instead.
 */
public class LockTimeoutException extends LockException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what was not granted in time, naming the lock path
   */
  public LockTimeoutException(String message) {
    super(message, null);
  }
}
