package io.lockstep.recipes.locks;

/** How an attempt to acquire a lock ended, as a {@link LockObserver} hears it. */
public enum AcquireOutcome {
  /** The lock was granted. */
  GRANTED,
  /** The budget of a timed acquire ran out; the attempt was withdrawn. */
  TIMED_OUT,
  /** The caller gave up otherwise: interrupted, or the asynchronous stage was cancelled. */
  WITHDRAWN,
  /**
   * ZooKeeper could not be reached: the budget ran out while the client had no connection or before
   * the first try got an answer, or the retry policy gave up on a lost connection ({@link
   * LockUnreachableException}).
   */
  UNREACHABLE,
  /** ZooKeeper failed otherwise beyond the client's retry policy, or the client was closed. */
  FAILED
}
