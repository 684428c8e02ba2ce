package io.lockstep.recipes.spring;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.owner.Handles;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.time.Duration;

/**
 * The hold of one {@link Locked} call: the {@link LockHold} it took, when it was granted, and its
 * time-to-live deadline ({@link HoldDeadline}), if the method has one. Calls nested on the same
 * lock share their outer call's.
 */
final class CallHold {
  private final LockHold hold;
  private final LockSettings settings; // the lock's clock and scheduler
  private final long grantedNanos;
  private final HoldDeadline deadline; // null: no time to live

  private CallHold(LockHold hold, Attempt attempt, HoldDeadline deadline) {
    this.hold = hold;
    this.settings = attempt.settings();
    this.grantedNanos = settings.now();
    this.deadline = deadline;
  }

  /**
   * The hold of a call, just granted: with a {@code ttl}, its deadline runs from now.
   *
   * @param renew whether the deadline renews itself while the hold is HELD
   */
  static CallHold granted(LockHold hold, Duration ttl, boolean renew) {
    Attempt attempt = Handles.attemptOf(hold);
    HoldDeadline deadline = null;
    if (ttl != null) {
      deadline = new HoldDeadline(attempt, renew);
      deadline.extend(ttl);
    }
    return new CallHold(hold, attempt, deadline);
  }

  LockHold hold() {
    return hold;
  }

  /** The lock's clock and scheduler. */
  LockSettings settings() {
    return settings;
  }

  /**
   * Moves the deadline to the time to live from now.
   *
   * @throws LockOwnershipLostException if the hold was lost, or its time to live ran out
   * @throws IllegalStateException if the call has no time to live
   */
  void renew() {
    hold.checkHeld();
    if (deadline == null) {
      throw new IllegalStateException(
          "The @Locked call's hold of "
              + hold.path()
              + " has no time to live to renew (set @Locked(ttl = ...) or the default)");
    }
    if (!deadline.extend(deadline.ttl())) {
      throw new LockOwnershipLostException(
          "Lock " + hold.path() + " was lost: its time to live (" + deadline.ttl() + ") ran out");
    }
  }

  /**
   * The call ended: its deadline stops.
   *
   * @return how much longer the hold must be kept to last {@code holdAtLeast} from its grant, in
   *     nanoseconds; 0 or less if it lasted that long already, or if {@code holdAtLeast} is null
   */
  long ended(Duration holdAtLeast) {
    if (deadline != null) {
      deadline.end();
    }
    if (holdAtLeast == null) {
      return 0;
    }
    return holdAtLeast.toNanos() - (settings.now() - grantedNanos);
  }
}
