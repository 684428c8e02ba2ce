package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.LockState;

/**
 * Where one acquisition stands. The waiting phases come first, in the order an attempt passes
 * through them; then the holding phases; then the ends.
 *
 * <pre>
 *   CREATING -&gt; (RECOVERING -&gt;) READING -&gt; WAITING -&gt; READING ... -&gt; (CONFIRMING -&gt;) HELD
 *   HELD &lt;-&gt; AT_RISK -&gt; LOST;  HELD, AT_RISK, LOST -&gt; RELEASED
 *   any waiting phase -&gt; WITHDRAWN | FAILED, or back to CREATING in a new epoch (requeue)
 * </pre>
 */
public enum Phase {
  /** Our create is on its way, or waits for a retry delay, or missing parents are being made. */
  CREATING,
  /** A create's answer was lost: we look for our node by its protection id. */
  RECOVERING,
  /** Our nodes exist; the read of the queue is on its way. */
  READING,
  /** A node ahead of ours is watched. */
  WAITING,
  /** The queue says we hold; a revocable lock reads and watches its own node before the grant. */
  CONFIRMING,
  /** Granted, and as far as we know still ours. */
  HELD,
  /** Granted, but the connection is suspended: it may already be lost. */
  AT_RISK,
  /** Granted once, lost since: session ended, node deleted or client closed. */
  LOST,
  /** The holder let go. */
  RELEASED,
  /** The caller gave up waiting (timeout, interrupt, cancel). */
  WITHDRAWN,
  /** The attempt failed (ZooKeeper error beyond the retry policy, or the client closed). */
  FAILED;

  /** Not granted yet and still trying. */
  public boolean isWaiting() {
    return compareTo(CONFIRMING) <= 0;
  }

  /** Granted and not lost. */
  public boolean isHolding() {
    return this == HELD || this == AT_RISK;
  }

  /** Whether the attempt was granted at some point. */
  public boolean wasGranted() {
    return this == HELD || this == AT_RISK || this == LOST || this == RELEASED;
  }

  /**
   * The state a hold in this phase reports: {@code AT_RISK}, {@code LOST} and {@code RELEASED} as
   * they are, {@code HELD} otherwise (the caller asks only once the hold was granted).
   */
  public LockState holdState() {
    return switch (this) {
      case AT_RISK -> LockState.AT_RISK;
      case LOST -> LockState.LOST;
      case RELEASED -> LockState.RELEASED;
      default -> LockState.HELD;
    };
  }

  /** Our nodes exist on the server (as far as we know). */
  boolean hasNodes() {
    return this == READING || this == WAITING || this == CONFIRMING || isHolding();
  }
}
