package io.lockstep.recipes.locks;

/**
 * Where a granted lock stands, as its holder sees it.
 *
 * <p>A lock is <em>held</em> from the moment an acquire returns successfully until {@code
 * release()} is called. While held, the holder's ZooKeeper session can falter; these states report
 * what the holder can still rely on. Listeners registered with {@link
 * FencedLock#getStateListenable()} hear every transition.
 *
 * <pre>
 *   HELD --(connection suspended)--&gt; AT_RISK --(reconnected, our node still ours)--&gt; HELD
 *   HELD or AT_RISK --(session lost, or our node deleted)--&gt; LOST
 *   any --(release())--&gt; RELEASED
 * </pre>
 */
public enum LockState {
  /** The lock is held: our node exists and belongs to our live session. */
  HELD,

  /**
   * The connection to ZooKeeper is suspended (or read-only): the lock may still be held, or the
   * session may already have expired on the server and another client may hold it. Pause work that
   * is not fenced.
   */
  AT_RISK,

  /**
   * The lock is no longer held: the session expired or was abandoned (a reconnect in a new session
   * counts as that), or our node was deleted (also by the holder's own process, when a hold's time
   * to live ran out). Another client may hold it now. {@link FencedLock#checkHeld()} throws {@link
   * LockOwnershipLostException}; the holder should stop and call {@code release()}.
   */
  LOST,

  /**
   * The holder called {@code release()}; the lock node has been deleted or its deletion is queued.
   */
  RELEASED
}
