package io.lockstep.recipes.locks;

/**
 * Thrown when a caller relies on a lock that it was granted but has since lost: its session expired
 * or was abandoned, or its lock node was deleted. Another client may hold the lock now.
 *
 * <p>It is an {@link IllegalMonitorStateException}, so code that already handles "I do not own this
 * lock" handles it too. The message names the lock path and the session that lost it. The holder
 * should stop the guarded work and call {@code release()}, which then only clears local state.
 */
public class LockOwnershipLostException extends IllegalMonitorStateException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message the lock path, the session and how the lock was lost
   */
  public LockOwnershipLostException(String message) {
    super(message);
  }
}
