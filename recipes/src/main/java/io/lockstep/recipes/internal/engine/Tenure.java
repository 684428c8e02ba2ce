package io.lockstep.recipes.internal.engine;

/**
 * Where a granted hold stands, the same for a hold with a node of its own and for a local hold of a
 * shared place: HELD and AT_RISK while it holds, LOST once it cannot, RELEASED once let go, and why
 * it was lost. Each method says whether it changed anything, so its owner knows what to announce.
 * Not thread-safe: used under its owner's lock.
 *
 * <pre>
 *   HELD --suspend--&gt; AT_RISK --restore--&gt; HELD
 *   HELD, AT_RISK --lose--&gt; LOST
 *   HELD, AT_RISK, LOST --release--&gt; RELEASED
 * </pre>
 */
public final class Tenure {
  private Phase phase;
  private String lostReason;

  /** A hold granted while connected is HELD; one granted while disconnected is AT_RISK. */
  public Tenure(boolean connected) {
    this.phase = connected ? Phase.HELD : Phase.AT_RISK;
  }

  public Phase phase() {
    return phase;
  }

  /** Whether the hold holds: HELD or AT_RISK. */
  public boolean isHolding() {
    return phase.isHolding();
  }

  /** Why the hold was lost, once it was. */
  public String lostReason() {
    return lostReason;
  }

  /** The connection is suspended: HELD becomes AT_RISK. */
  public boolean suspend() {
    if (phase != Phase.HELD) {
      return false;
    }
    phase = Phase.AT_RISK;
    return true;
  }

  /** The hold is known to be ours again: AT_RISK becomes HELD. */
  public boolean restore() {
    if (phase != Phase.AT_RISK) {
      return false;
    }
    phase = Phase.HELD;
    return true;
  }

  /** The hold is gone: HELD or AT_RISK becomes LOST. */
  public boolean lose(String reason) {
    if (!phase.isHolding()) {
      return false;
    }
    phase = Phase.LOST;
    lostReason = reason;
    return true;
  }

  /**
   * The holder lets go.
   *
   * @return false if it had let go already
   */
  public boolean release() {
    if (phase == Phase.RELEASED) {
      return false;
    }
    phase = Phase.RELEASED;
    return true;
  }

  /** The loss to report at release: the reason if the hold was lost, else null. */
  public String lostBeforeRelease() {
    return phase == Phase.LOST ? lostReason : null;
  }
}
